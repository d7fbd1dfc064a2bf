"""The platform client depends on nothing above it (DESIGN.md: arrows point down)."""

from __future__ import annotations

import ast
from pathlib import Path

import marketplace.platform

PACKAGE = Path(marketplace.platform.__file__).parent
# The project's own modules it may use: itself and two root helpers with no app behind.
ALLOWED_OWN = ("marketplace.platform", "marketplace.log_redaction", "marketplace.redis_client")
PROJECT_ROOTS = ("marketplace", "sellers", "sandbox", "bench", "tests", "docs")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            names.add("marketplace.platform")  # a relative import stays inside
    return names


def test_no_module_of_the_platform_package_imports_an_app_above_it() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 10
    offending = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in modules
        for name in imported_modules(path)
        if name.split(".")[0] in PROJECT_ROOTS
        and not any(name == own or name.startswith(own + ".") for own in ALLOWED_OWN)
    }
    assert not offending, sorted(offending)
