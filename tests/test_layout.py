"""The house's rules, read from the source: who may import whom.

Read with ``ast`` (every ``import``, also those inside functions and under
``TYPE_CHECKING``: a type-only import is still a dependency a reader must follow), so
the check needs no Django set-up and sees modules that are never imported by a test.

Units: each sub-package of ``marketplace/`` and ``sandbox/`` is one unit, ``sellers`` is
one, and each root module (``marketplace/urls.py``, ``sandbox/settings.py`` …) is a unit
of its own, so the project files that wire everything together do not count as a
package that depends on everything.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APP_TOPS = ("marketplace", "sellers")
TOPS = ("marketplace", "sellers", "sandbox")
# The apps import downwards only (DESIGN.md, "The house"): a higher rank imports a lower
# one, never the other way round nor sideways.
APP_RANK = {
    # Buyers' personal data and retention: reads and writes orders and returns; nothing
    # imports it (the URLs and beat name it).
    "marketplace.privacy": 5,
    "marketplace.portal": 4,
    "marketplace.dashboard": 4,
    "marketplace.metrics": 4,
    # The intake API assembled (not an app): the order and return routes, named there.
    "marketplace.intake": 4,
    # Seller scorecards: read orders, returns and the catalog's feed runs; the staff
    # sellers list and /metrics read its stored figures.
    # Reconciliation with the platform: compares orders, returns, refunds and listing
    # status, repairs through the outbox and the sync (forcing a pull), records findings.
    "marketplace.reconcile": 3.7,
    "marketplace.performance": 3.5,
    # Each seller's pull schedule and state; calls the orders pull and the after-sale pull
    # (returns) explicitly. The connect flow (sellers) starts it by task name.
    "marketplace.sync": 3.5,
    # Returns are of orders: they read an order's lines and shipments; orders knows
    # nothing of them.
    "marketplace.returns": 3,
    "marketplace.orders": 2,
    "marketplace.catalog": 2,
    # The outbox engine: knows no app (each hands it its kind); above the platform client
    # only, whose errors and call log it uses.
    "marketplace.outbox": 1,
    "sellers": 1,
    "marketplace.platform": 0,
}
SANDBOX_ROOMS = {
    "common",
    "records",
    "order_source",
    "orders_v2",
    "auth_api",
    "platform_api",
    "edrts",
    "content_api",
    "seller_sim",
}
# The rooms of the API groups: each reads and writes the platform's records through
# ``records`` (and ``common``), never through another group's room (DESIGN.md).
SANDBOX_API_GROUPS = SANDBOX_ROOMS - {"common", "records", "seller_sim"}
assert SANDBOX_API_GROUPS < SANDBOX_ROOMS


def _modules(top: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((REPO / top).rglob("*.py")):
        relative = path.relative_to(REPO)
        if "migrations" in relative.parts:
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _imports(module: str, path: Path) -> set[str]:
    """Absolute names of every module ``module`` imports (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base)
                name = f"{prefix}.{node.module}" if node.module else prefix
            else:
                name = node.module or ""
            found.add(name)
            # ``from pkg import sub`` may name a sub-module: count it too.
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


def _unit(name: str, depth: int = 2) -> str | None:
    """The unit a module name belongs to (its first ``depth`` parts, as far as they are
    packages or modules of ours), or None when it is not ours."""
    parts = name.split(".")
    if parts[0] not in TOPS:
        return None
    if parts[0] == "sellers":
        depth -= 1  # an app at the level of marketplace's sub-packages
    unit = [parts[0]]
    folder = REPO / parts[0]
    for part in parts[1:depth]:
        if (folder / part).is_dir():
            folder = folder / part
            unit.append(part)
        elif (folder / f"{part}.py").is_file():
            unit.append(part)  # a module is a unit of its own
            break
        else:
            break  # a name imported from a package's __init__, not a module
    return ".".join(unit)


def _edges(tops: tuple[str, ...], depth: int = 2) -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the modules that make the edge (for the message)."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for top in tops:
        for module, path in _modules(top):
            source = _unit(module, depth)
            if source is None:
                continue
            for name in _imports(module, path):
                target = _unit(name, depth)
                if target is not None and target != source:
                    edges[source][target].add(module)
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _describe(edges: dict[str, dict[str, set[str]]], component: list[str]) -> str:
    lines = []
    for source in component:
        for target in component:
            if target in edges.get(source, {}):
                users = ", ".join(sorted(edges[source][target])[:3])
                lines.append(f"  {source} -> {target}  (in {users})")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def app_edges() -> dict[str, dict[str, set[str]]]:
    return _edges(APP_TOPS)


@pytest.fixture(scope="module")
def sandbox_edges() -> dict[str, dict[str, set[str]]]:
    return _edges(("sandbox",))


def test_the_app_never_imports_the_sandbox(app_edges: dict[str, dict[str, set[str]]]) -> None:
    offenders = {
        f"{source} imports {target} (in {sorted(users)[0]})"
        for source, targets in app_edges.items()
        for target, users in targets.items()
        if target == "sandbox" or target.startswith("sandbox.")
    }
    assert not offenders, "\n".join(sorted(offenders))


def test_the_sandbox_never_imports_the_app(
    sandbox_edges: dict[str, dict[str, set[str]]],
) -> None:
    offenders = {
        f"{source} imports {target} (in {sorted(users)[0]})"
        for source, targets in sandbox_edges.items()
        for target, users in targets.items()
        if target.split(".")[0] in APP_TOPS
    }
    assert not offenders, "\n".join(sorted(offenders))


def test_the_platform_client_imports_no_app(app_edges: dict[str, dict[str, set[str]]]) -> None:
    """``marketplace/platform/`` depends on nothing above it: no app package, and a root
    module only when that module itself imports no package of ours (settings, redaction)."""

    def is_package(unit: str) -> bool:
        return unit == "sellers" or (REPO / unit.replace(".", "/")).is_dir()

    def is_leaf_module(unit: str) -> bool:
        return not is_package(unit) and not any(
            is_package(target) for target in app_edges.get(unit, {})
        )

    offenders = [
        f"marketplace.platform imports {target} (in {sorted(users)})"
        for target, users in app_edges.get("marketplace.platform", {}).items()
        if not is_leaf_module(target)
    ]
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("side", ["app", "sandbox"])
def test_no_cycle_between_packages(
    side: str,
    app_edges: dict[str, dict[str, set[str]]],
    sandbox_edges: dict[str, dict[str, set[str]]],
) -> None:
    edges = app_edges if side == "app" else sandbox_edges
    graph = {source: set(targets) for source, targets in edges.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(edges, c) for c in cycles)


def test_apps_import_only_apps_below_them(app_edges: dict[str, dict[str, set[str]]]) -> None:
    apps = {"sellers"} | {
        f"marketplace.{folder.name}"
        for folder in (REPO / "marketplace").iterdir()
        if (folder / "apps.py").is_file()
    }
    assert apps - set(APP_RANK) == set(), "a new app needs a place in APP_RANK"
    offenders = [
        f"{source} imports {target} (in {sorted(users)[0]})"
        for source, targets in app_edges.items()
        if source in APP_RANK
        for target, users in targets.items()
        if target in APP_RANK and APP_RANK[target] >= APP_RANK[source]
    ]
    assert not offenders, "\n".join(sorted(offenders))


def test_the_sandbox_root_holds_only_project_files_and_rooms() -> None:
    """Everything else lives in one sub-package per API group (or ``common``)."""
    project_files = {"__init__.py", "__main__.py", "settings.py", "urls.py", "wsgi.py"}
    entries = {p.name for p in (REPO / "sandbox").iterdir() if p.name != "__pycache__"}
    # Besides: its notes, and its mypy config (its own django-stubs settings module).
    assert entries - project_files - {"README.md", "mypy.ini"} == SANDBOX_ROOMS
    # The simulated seller and the records serve no URL.
    for room in SANDBOX_ROOMS - {"seller_sim", "records"}:
        assert (REPO / "sandbox" / room / "urls.py").is_file(), room


def test_common_imports_no_room_and_the_simulated_seller_only_common(
    sandbox_edges: dict[str, dict[str, set[str]]],
) -> None:
    assert set(sandbox_edges.get("sandbox.common", {})) == set()
    assert set(sandbox_edges.get("sandbox.seller_sim", {})) <= {"sandbox.common"}


def test_no_sandbox_api_group_imports_another(
    sandbox_edges: dict[str, dict[str, set[str]]],
) -> None:
    """Every group stands on ``records`` and ``common`` only; ``records`` on ``common``."""
    below = {"sandbox.records", "sandbox.common"}
    offenders = [
        f"{source} imports {target} (in {sorted(users)[0]})"
        for source, targets in sandbox_edges.items()
        if source.removeprefix("sandbox.") in SANDBOX_API_GROUPS
        for target, users in targets.items()
        if target not in below
    ]
    assert not offenders, "\n".join(sorted(offenders))
    assert set(sandbox_edges.get("sandbox.records", {})) <= {"sandbox.common"}


def test_no_cycle_inside_the_sandbox_rooms() -> None:
    """One level down too: the modules and nested packages of each room."""
    edges = _edges(("sandbox",), depth=3)
    graph = {source: set(targets) for source, targets in edges.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(edges, c) for c in cycles)


def test_no_cycle_between_files_of_the_app() -> None:
    """Every module of ``marketplace/`` and ``sellers/`` is a node, and imports inside
    functions count: an import hidden in a function to dodge a cycle is still one (a
    service starts a task by name, ``marketplace.enqueue``)."""
    edges = _edges(APP_TOPS, depth=99)
    graph = {source: set(targets) for source, targets in edges.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(edges, c) for c in cycles)


def test_the_checker_sees_a_cycle() -> None:
    """The cycle finder itself: a graph with a cycle is reported, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []


def test_tests_sit_in_the_room_they_test() -> None:
    """Every test module lives in a folder named for what it tests (``tests/marketplace/…``,
    ``tests/stack/``, ``tests/support/`` …); at the top only the rules that span rooms."""
    loose = {p.name for p in (REPO / "tests").glob("*.py")}
    assert loose <= {"__init__.py", "conftest.py", "test_layout.py", "test_invariants.py"}, loose
