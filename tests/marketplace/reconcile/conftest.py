"""The reconciliation's tests set up, on purpose, states the pull has not read (or reads
again by its cursor's overlap, everything here happening within seconds): they check what
the comparison itself finds, so a pass compares at once. ``test_pull_first.py`` checks the
pull a pass runs first (``RECONCILE_PULL_FIRST``, on by default)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _compare_at_once(settings: Any) -> None:
    settings.RECONCILE_PULL_FIRST = False
