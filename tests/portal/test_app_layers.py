"""The apps import downwards only: ``portal``, ``dashboard`` → ``orders``, ``returns``,
``catalog`` → ``sellers`` → ``platform`` (DESIGN.md, "The house"). Read from the source
with ``ast``, imports inside functions included, so a cycle cannot come back unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Higher imports lower, never the other way round (nor sideways).
RANK = {
    "portal": 3,
    "dashboard": 3,
    "orders": 2,
    "returns": 2,
    "catalog": 2,
    "sellers": 1,
    "platform": 0,
}
# Another change removes the client's edges up into sellers (its TokenSource protocol).
UNCHECKED = {"platform"}


def app_packages() -> dict[str, Path]:
    """The Django apps: ``sellers`` and every ``marketplace`` sub-package with an apps.py."""
    packages = {"sellers": ROOT / "sellers"}
    for folder in sorted((ROOT / "marketplace").iterdir()):
        if (folder / "apps.py").exists():
            packages[folder.name] = folder
    return packages


def app_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "sellers":
        return "sellers"
    if parts[0] == "marketplace" and len(parts) > 1 and parts[1] in RANK:
        return parts[1]
    return None


def imported_modules(path: Path) -> list[tuple[str, int]]:
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*module.split(".")[: -node.level], *filter(None, [base])])
            found += [(base, node.lineno)]
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return found


def upward_imports() -> list[str]:
    wrong = []
    for app, folder in app_packages().items():
        if app in UNCHECKED:
            continue
        for path in folder.rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for module, line in imported_modules(path):
                target = app_of(module)
                if target and target != app and RANK[target] >= RANK[app]:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return sorted(set(wrong))


def test_every_app_package_has_a_place_in_the_house() -> None:
    assert set(app_packages()) - set(RANK) == set()
    assert {"portal", "dashboard", "orders", "catalog", "sellers"} <= set(app_packages())


def test_apps_import_only_apps_below_them() -> None:
    assert upward_imports() == []
