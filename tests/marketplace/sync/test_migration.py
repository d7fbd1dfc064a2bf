"""The data migration that merges the four pull-state tables into ``SellerSync`` loses
nothing: cursors, resume points, watermarks, next-due times, backoff, last errors, leases
and the latest Pull now all arrive on the seller's one row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("sync", "0001_seller_sync"),
    ("sellers", "0006_admin_plural_names"),
    ("orders", "0006_order_list_indexes"),
    ("returns", "0004_order_delete_takes_returns"),
    ("portal", "0002_seller_notifications"),
]
AFTER = [("sync", "0002_merge_pull_state_tables")]
T = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_every_sellers_pull_state_arrives_on_one_row() -> None:
    old = _migrate(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="m-1", password="!")
    other_user = old.get_model("auth", "User").objects.create(username="m-2", password="!")
    seller = old.get_model("sellers", "Seller").objects.create(user=user, display_name="A")
    only_requests = old.get_model("sellers", "Seller").objects.create(
        user=other_user, display_name="B"
    )
    old.get_model("sellers", "PlatformConnection").objects.create(
        seller=seller, state="connected", connected_at=T - timedelta(days=3)
    )
    old.get_model("sellers", "PullSchedule").objects.create(
        seller=seller,
        next_pull_at=T + timedelta(minutes=12),
        reason="idle — backing off (step 3)",
        idle_steps=3,
        failures=4,
        queued_at=T - timedelta(minutes=1),
        last_pulled_at=T,
    )
    old.get_model("orders", "SellerPullState").objects.create(
        seller=seller,
        cursor=T - timedelta(hours=1),
        resume_cursor="page-7",
        resume_since=T - timedelta(hours=2),
        resume_started_at=T - timedelta(minutes=5),
        retry_numbers=["MP-9"],
        consecutive_failures=2,
        claim_token="tok",
        lease_until=T + timedelta(minutes=4),
        last_started_at=T - timedelta(minutes=5),
        last_finished_at=T - timedelta(minutes=4),
        last_success_at=T - timedelta(hours=1),
        last_error="PlatformUnavailable: 503",
    )
    old.get_model("returns", "SellerReturnsPullState").objects.create(
        seller=seller,
        returns_watermark=T - timedelta(hours=3),
        returns_error="",
        refunds_error="PlatformRejected: 400",
        refunds_failed_at=T - timedelta(minutes=30),
        last_finished_at=T - timedelta(minutes=29),
    )
    requests = old.get_model("portal", "SellerPullRequest")
    requests.objects.create(seller=seller, requested_at=T - timedelta(days=2))
    requests.objects.create(seller=seller, requested_at=T - timedelta(minutes=2))
    requests.objects.create(seller=only_requests, requested_at=T - timedelta(hours=5))

    try:
        new = _migrate(AFTER)
        rows = {row.seller_id: row for row in new.get_model("sync", "SellerSync").objects.all()}
        assert set(rows) == {seller.pk, only_requests.pk}
        merged = rows[seller.pk]
        # the schedule
        assert merged.next_pull_at == T + timedelta(minutes=12)
        assert (merged.reason, merged.idle_steps) == ("idle — backing off (step 3)", 3)
        assert merged.queued_at == T - timedelta(minutes=1)
        assert merged.consecutive_failures == 4  # the larger count of the same pulls
        assert merged.last_finished_at == T  # the later end of the same pull
        assert merged.started_at == T - timedelta(days=3)  # started by its connect
        # the orders listing, the lease and the outcome
        assert merged.cursor == T - timedelta(hours=1)
        assert (merged.resume_cursor, merged.retry_numbers) == ("page-7", ["MP-9"])
        assert merged.resume_since == T - timedelta(hours=2)
        assert merged.resume_started_at == T - timedelta(minutes=5)
        assert (merged.claim_token, merged.lease_until) == ("tok", T + timedelta(minutes=4))
        assert merged.last_success_at == T - timedelta(hours=1)
        assert merged.last_error == "PlatformUnavailable: 503"
        # the after-sale listings
        assert merged.returns_watermark == T - timedelta(hours=3)
        assert merged.refunds_error == "PlatformRejected: 400"
        assert merged.refunds_failed_at == T - timedelta(minutes=30)
        assert merged.after_sale_finished_at == T - timedelta(minutes=29)
        # the latest Pull now of each seller
        assert merged.pull_now_requested_at == T - timedelta(minutes=2)
        assert rows[only_requests.pk].pull_now_requested_at == T - timedelta(hours=5)
        assert rows[only_requests.pk].next_pull_at is None  # never scheduled: not connected
    finally:
        executor = MigrationExecutor(connection)
        _migrate(executor.loader.graph.leaf_nodes())
