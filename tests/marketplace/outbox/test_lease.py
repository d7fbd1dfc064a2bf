"""The one claim-with-lease (``marketplace.outbox.lease``): taken by one holder at a time,
free again when the lease runs out, written to only while held; and the rule that no
other module of the app writes the lease's columns."""

from __future__ import annotations

import ast
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from marketplace.outbox import lease
from marketplace.sync.models import SellerSync
from sellers.models import Seller

REPO = Path(__file__).resolve().parents[3]
PRIMITIVE = REPO / "marketplace" / "outbox" / "lease.py"
COLUMNS = {"claim_token", "lease_until"}
# Calls whose keyword arguments are lookups, not values written.
READS = {"filter", "exclude", "get", "Q", "first", "aggregate", "Count"}
RAW_SET = re.compile(r"\bSET\b.*\b(claim_token|lease_until)\b\s*=", re.IGNORECASE | re.DOTALL)


def lease_writes(source: str) -> list[str]:
    """Where ``source`` writes a lease column: attribute assignment, a keyword of any call
    but a lookup (``update``, ``create``, a model's constructor …), a dict key
    (``defaults=``, ``**values``), ``setattr``, or a raw ``SET`` clause."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if node.attr in COLUMNS:
                found.append(f"line {node.lineno}: .{node.attr} = …")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in READS:
                found += [
                    f"line {node.lineno}: {name}({k.arg}=…)"
                    for k in node.keywords
                    if k.arg in COLUMNS
                ]
            if name == "setattr" and len(node.args) > 1:
                column = node.args[1]
                if isinstance(column, ast.Constant) and column.value in COLUMNS:
                    found.append(f"line {node.lineno}: setattr(…, {column.value!r})")
        elif isinstance(node, ast.Dict):
            found += [
                f"line {node.lineno}: {{{k.value!r}: …}}"
                for k in node.keys
                if isinstance(k, ast.Constant) and k.value in COLUMNS
            ]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and RAW_SET.search(node.value)
        ):
            found.append(f"line {node.lineno}: raw SQL SET")
    return found


def test_only_the_lease_module_writes_the_lease_columns() -> None:
    """Every claim of ``marketplace/`` and ``sellers/`` goes through the one lease: the
    outbox engine's claim, the sync's pull lease and its fan-out. (Migrations move data
    as it stood.)"""
    offenders = [
        f"{path.relative_to(REPO)} {where}"
        for top in ("marketplace", "sellers")
        for path in sorted((REPO / top).rglob("*.py"))
        if path != PRIMITIVE and "migrations" not in path.parts
        for where in lease_writes(path.read_text())
    ]
    assert offenders == []


def test_the_checker_sees_every_way_of_writing_a_lease() -> None:
    written = """
row.lease_until = None
row.claim_token, row.lease_until = "", None
Rows.objects.filter(pk=1).update(claim_token="")
Rows.objects.update_or_create(pk=1, defaults={"lease_until": now})
Rows(claim_token="x")
setattr(row, "lease_until", now)
cursor.execute("UPDATE t SET lease_until = %s WHERE id = 1")
"""
    lines = {int(where.split(":")[0].removeprefix("line ")) for where in lease_writes(written)}
    assert lines == {2, 3, 4, 5, 6, 7, 8}  # every line of it
    read = """
Rows.objects.filter(claim_token=token, lease_until__lt=now).first()
Q(claim_token="") | Q(lease_until__lt=now)
held = row.claim_token == token and row.lease_until > now
cursor.execute("SELECT id FROM t WHERE lease_until < %s")
"""
    assert lease_writes(read) == []
    assert lease_writes(PRIMITIVE.read_text()) != []  # the one place that does


# --- the operations, on a table that carries the lease (a seller's sync row) -----------


def rows_due(count: int, *, now: datetime) -> list[int]:
    """``count`` sync rows due one second apart, oldest first; returns their sellers."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"lease-{i}", password="!") for i in range(count)
    )
    sellers = Seller.objects.bulk_create(
        Seller(user=user, display_name=f"lease {i}") for i, user in enumerate(users)
    )
    SellerSync.objects.bulk_create(
        SellerSync(seller=seller, next_pull_at=now - timedelta(seconds=count - i))
        for i, seller in enumerate(sellers)
    )
    return [s.id for s in sellers]


def take_due(now: datetime, *, limit: int, token: str | None) -> list[int]:
    return lease.take_due(
        SellerSync,
        due_field="next_pull_at",
        due_by=now,
        until=now + timedelta(seconds=60),
        now=now,
        limit=limit,
        returning="seller_id",
        token=token,
    )


@pytest.mark.django_db
def test_due_rows_are_taken_oldest_first_and_rows_held_are_passed_over() -> None:
    now = timezone.now()
    sellers = rows_due(5, now=now)
    assert take_due(now, limit=2, token="first") == sellers[:2]
    assert take_due(now, limit=10, token="second") == sellers[2:]
    assert take_due(now, limit=10, token="third") == []
    held = SellerSync.objects.get(seller_id=sellers[0])
    assert (held.claim_token, held.lease_until) == ("first", now + timedelta(seconds=60))
    # The first holder's lease runs out: its rows are due and free again.
    later = now + timedelta(seconds=61)
    assert take_due(later, limit=10, token="fourth") == sellers


@pytest.mark.django_db
def test_without_a_token_the_due_time_is_the_lease() -> None:
    now = timezone.now()
    sellers = rows_due(3, now=now)
    assert take_due(now, limit=10, token=None) == sellers
    row = SellerSync.objects.get(seller_id=sellers[0])
    assert (row.next_pull_at, row.claim_token, row.lease_until) == (
        now + timedelta(seconds=60),
        "",
        None,
    )
    assert take_due(now + timedelta(seconds=59), limit=10, token=None) == []
    assert take_due(now + timedelta(seconds=60), limit=10, token=None) == sellers


@pytest.mark.django_db
def test_a_named_row_is_taken_once_extended_and_recorded_only_by_its_holder() -> None:
    now = timezone.now()
    (seller,) = rows_due(1, now=now)
    rows = SellerSync.objects.filter(seller_id=seller)
    until = now + timedelta(seconds=60)
    assert lease.take(rows, token="a", until=until, now=now) == 1
    assert lease.take(rows, token="b", until=until, now=now) == 0
    assert lease.extend(rows, token="b", until=until, reason="b's") is False
    assert lease.extend(rows, token="a", until=until + timedelta(seconds=5), reason="a's")
    assert (rows.get().lease_until, rows.get().reason) == (until + timedelta(seconds=5), "a's")
    with lease.holding(rows, token="b") as row:
        assert row is None
    with lease.holding(rows, token="a") as row:
        assert row is not None
        assert lease.held_by(row, "a")
        lease.clear(row)
        row.save()
    assert (rows.get().claim_token, rows.get().lease_until) == ("", None)
    assert lease.take(rows, token="b", until=until, now=now) == 1


@pytest.mark.django_db
def test_release_is_the_holders_and_a_lapsed_lease_is_freed_for_staff() -> None:
    now = timezone.now()
    (seller,) = rows_due(1, now=now)
    rows = SellerSync.objects.filter(seller_id=seller)
    assert lease.take(rows, token="a", until=now + timedelta(seconds=60), now=now) == 1
    assert lease.release(rows, token="b") == 0
    assert lease.release_lapsed(rows, now=now) == 0  # live: left to its holder
    assert lease.release(rows, token="a") == 1
    assert lease.take(rows, token="c", until=now - timedelta(seconds=1), now=now) == 1
    assert lease.release_lapsed(rows, now=now) == 1
    assert rows.get().claim_token == ""


@pytest.mark.django_db
def test_a_token_without_a_lease_holds_nothing() -> None:
    """Rows of older code: a token left behind with no lease end."""
    now = timezone.now()
    (seller,) = rows_due(1, now=now)
    SellerSync.objects.filter(seller_id=seller).update(claim_token="old")
    row = SellerSync.objects.get(seller_id=seller)
    assert not lease.is_held(row, now)
    assert SellerSync.objects.filter(lease.unclaimed(now)).count() == 1
    assert take_due(now, limit=10, token="new") == [seller]
