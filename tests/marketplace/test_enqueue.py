"""``marketplace.enqueue``: every task a service names is a registered task, and a queued
task waits for the caller's commit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from marketplace.celery import app
from marketplace.enqueue import task_enqueue

REPO = Path(__file__).resolve().parents[2]


def _task_name_constants() -> dict[str, str]:
    """Every module-level ``NAME_TASK = "dotted.name"`` of the app: constant -> name."""
    found: dict[str, str] = {}
    for top in ("marketplace", "sellers"):
        for path in (REPO / top).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                target = node.targets[0] if isinstance(node, ast.Assign) else None
                if (
                    isinstance(target, ast.Name)
                    and target.id.endswith("_TASK")
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                ):
                    found[f"{path.relative_to(REPO)}:{target.id}"] = node.value.value
    return found


def test_every_named_task_is_registered() -> None:
    names = _task_name_constants()
    assert names, "no *_TASK constant found: the check would pass on nothing"
    registered = set(app.tasks.keys())
    missing = {where: name for where, name in names.items() if name not in registered}
    assert missing == {}


@pytest.mark.django_db(transaction=True)
def test_a_queued_task_waits_for_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import transaction

    sent: list[tuple[object, ...]] = []
    monkeypatch.setattr(
        "celery.canvas.Signature.apply_async",
        lambda self, **options: sent.append((self.task, tuple(self.args), options)),
    )
    name = next(iter(_task_name_constants().values()))
    with transaction.atomic():
        task_enqueue(name, 7)
        assert sent == []
    assert sent == [(name, (7,), {})]

    # Rolled back: never sent.
    def rolled_back() -> None:
        with transaction.atomic():
            task_enqueue(name, 8)
            raise RuntimeError

    with pytest.raises(RuntimeError):
        rolled_back()
    assert len(sent) == 1
