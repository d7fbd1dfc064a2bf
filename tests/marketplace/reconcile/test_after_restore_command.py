"""``manage.py reconcile --after-restore [--since ISO]``: its arguments (the pass itself is
``test_after_restore.py``'s and ``test_restore.py``'s, against the sandbox)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_since_must_be_a_date_time_with_a_zone() -> None:
    with pytest.raises(CommandError, match="with a zone"):
        call_command("reconcile", "--all", "--after-restore", "--since", "2026-11-27T02:00")


def test_since_goes_with_after_restore() -> None:
    with pytest.raises(CommandError, match="--since goes with --after-restore"):
        call_command("reconcile", "--all", "--since", "2026-11-27T02:00:00Z")


def test_with_no_seller_connected_it_passes_nobody() -> None:
    out = io.StringIO()

    call_command(
        "reconcile", "--all", "--after-restore", "--since", "2026-11-27T02:00:00Z", stdout=out
    )

    assert out.getvalue() == "0 seller(s) reconciled, 0 with an error\n"
