"""The sandbox's house rules, read from its source: one room per API group, rooms import
``common`` (and a few one-way edges), never each other in a cycle; ``common`` imports no
room; the simulated seller imports nothing of the server but ``common``."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SANDBOX = Path(__file__).resolve().parents[2] / "sandbox"
PROJECT_FILES = {"__init__.py", "__main__.py", "settings.py", "urls.py", "wsgi.py", "README.md"}
ROOMS = {"common", "order_source", "orders_v2", "auth_api", "platform_api", "seller_sim"}


def _imports(path: Path) -> set[str]:
    """The sandbox modules ``path`` imports (absolute imports; the sandbox uses no others)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.startswith("sandbox.")}


def _edges(depth: int) -> dict[str, set[str]]:
    """Package → the packages it imports, packages named by their first ``depth`` parts
    below ``sandbox`` (``depth=1``: rooms; ``2``: modules or nested packages of a room)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in SANDBOX.rglob("*.py"):
        parts = path.relative_to(SANDBOX).with_suffix("").parts
        if "migrations" in parts or len(parts) <= depth - 1 or len(parts) < 2:
            continue
        source = ".".join(parts[:depth])
        for name in _imports(path):
            target = ".".join(name.split(".")[1 : 1 + depth])
            if target != source and target.split(".")[0] in ROOMS:
                edges[source].add(target)
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return [*trail, node, nxt]
            if nxt not in state and (found := visit(nxt, [*trail, node])):
                return found
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_the_sandbox_root_holds_only_project_files_and_rooms() -> None:
    entries = {p.name for p in SANDBOX.iterdir() if p.name != "__pycache__"}

    assert entries - PROJECT_FILES == ROOMS


def test_every_server_room_has_its_own_urls() -> None:
    for room in ROOMS - {"seller_sim"}:
        assert (SANDBOX / room / "urls.py").is_file(), room


def test_no_import_cycle_between_rooms() -> None:
    assert _cycle(_edges(depth=1)) is None


def test_no_import_cycle_inside_the_rooms() -> None:
    edges = _edges(depth=2)

    assert _cycle(edges) is None


def test_common_imports_no_room() -> None:
    assert _edges(depth=1)["common"] == set()


def test_the_simulated_seller_imports_only_common() -> None:
    assert _edges(depth=1)["seller_sim"] <= {"common"}
