"""The catalog's rooms import downwards only: ``staff`` → ``listing_status`` → ``feeds`` →
``api_access`` (README, Architecture). Read from the source like ``tests/test_layout.py``
(imports inside functions counted), so a room that reaches up fails here, not in review."""

from __future__ import annotations

from tests.test_layout import _imports, _modules

ROOMS = {"api_access": 0, "feeds": 1, "listing_status": 2, "staff": 3}
PREFIX = "marketplace.catalog."


def _room(module: str) -> str | None:
    if not module.startswith(PREFIX):
        return None
    first = module[len(PREFIX) :].split(".")[0]
    return first if first in ROOMS else None


def test_each_room_imports_only_rooms_below_it() -> None:
    offenders = []
    seen = set()
    for module, path in _modules("marketplace"):
        source = _room(module)
        if source is None:
            continue
        seen.add(source)
        for name in _imports(module, path):
            target = _room(name)
            if target is not None and target != source and ROOMS[target] >= ROOMS[source]:
                offenders.append(f"{module} imports {name}")
    assert seen == set(ROOMS)  # the rule reads every room (a renamed room fails here)
    assert not offenders, "\n".join(sorted(offenders))
