"""A reconciliation pass reads the listing statuses EDRTS sent back through the Content API
(real HTTP, the real sandbox): a status the platform holds otherwise is found and sent
again within one pass; nothing sent costs no call."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.listing_status import edrts_sender
from marketplace.catalog.models import Listing, RejectedSku, StatusChange, StatusSent
from marketplace.reconcile import kinds
from marketplace.reconcile.models import FindingAction, ReconcileRun, RunTrigger
from marketplace.reconcile.seller_pass import seller_reconcile
from sellers.models import Seller
from tests.marketplace.catalog.platform import (
    CatalogWorld,
    api_sign_in,
    catalog_world_create,
    edrts_source_create,
)
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture
def statuses_sent(
    platform: Platform, connected_seller: Seller, settings: Any, staff_user: Any
) -> CatalogWorld:
    """Alice (connected) with a database of 5 products at the platform, the API user
    signed in, EDRTS on, and the statuses of 3 listings and 1 rejection sent."""
    settings.EDRTS_RATE_PER_SECOND = 1000.0
    settings.EDRTS_LINGER_SECONDS = 0.0
    platform.sandbox.edrts_state(delay_seconds=0.0)
    # The platform's sandbox is kept (Alice's grant): the database is added to it.
    world = catalog_world_create(platform.sandbox, settings, reset=False)
    api_sign_in(world, staff_user)
    edrts_source_create(world, connected_seller)
    Listing.objects.bulk_create(
        [
            Listing(seller=connected_seller, sku=f"AL-{n:04d}", price="10.00", last_run_id=1)
            for n in range(1, 4)
        ]
    )
    RejectedSku.objects.create(
        seller=connected_seller,
        sku="AL-0004",
        reason="no title",
        run_id=1,
        updated_at=timezone.now(),
    )
    drain(connected_seller)
    world.sandbox.edrts_wait_idle()  # accepted, then applied by the sandbox's EDRTS worker
    return world


def drain(seller: Seller) -> None:
    deadline = time.monotonic() + 20
    while StatusChange.objects.filter(seller=seller, sent_at__isnull=True).exists():
        assert time.monotonic() < deadline, "statuses still waiting"
        result = edrts_sender.status_sync_drain(seller_id=seller.pk)
        if result.again_in:
            time.sleep(result.again_in)


def at_platform(world: CatalogWorld) -> dict[str, dict[str, str]]:
    world.sandbox.edrts_wait_idle()
    return {row["id"]: row for row in world.sandbox.db_rows(world.db_id, per_page=1000)}


def content_calls(platform: Platform, since: int) -> list[dict[str, Any]]:
    return [
        entry
        for entry in platform.requests(since_seq=since)
        if "/raw_data" in str(entry.get("path", ""))
    ]


def last_seq(platform: Platform) -> int:
    entries = platform.requests(limit=1)
    return entries[-1]["seq"] if entries else 0


def reconcile(seller: Seller) -> ReconcileRun:
    return seller_reconcile(seller_id=seller.pk, trigger=RunTrigger.COMMAND)


def test_statuses_in_step_find_nothing_in_one_content_call(
    statuses_sent: CatalogWorld, connected_seller: Seller, platform: Platform, quiet_broker: Any
) -> None:
    # Given four statuses sent and held at the platform (no open order)
    assert at_platform(statuses_sent)["AL-0004"]["mp_status"] == "rejected"
    since = last_seq(platform)
    # When a pass runs
    run = reconcile(connected_seller)
    # Then it read them in one Content API call and found nothing
    assert (run.error, run.findings_count, run.compared) == ("", 0, {"listing_statuses": 4})
    assert run.platform_calls == 1
    assert len(content_calls(platform, since)) == 1
    assert platform.sandbox.violations()["total"] == 0


def test_a_status_changed_at_the_platform_is_found_and_sent_again(
    statuses_sent: CatalogWorld, connected_seller: Seller, platform: Platform, quiet_broker: Any
) -> None:
    # Given the platform changed AL-0002's status (a support action: no update we see)
    statuses_sent.sandbox.db_rows_change(
        statuses_sent.db_id, rows=[{"id": "AL-0002", "mp_status": "inactive"}]
    )
    sent = StatusSent.objects.get(seller=connected_seller, sku="AL-0002")
    # When one pass runs
    run = reconcile(connected_seller)
    # Then it is found, and its status recorded again on the outbox
    assert run.error == ""
    assert list(run.findings.values_list("kind", "object_key", "action")) == [
        (kinds.LISTING_STATUS_BEHIND, "AL-0002", FindingAction.RESENT)
    ]
    finding = run.findings.get()
    assert finding.ours == {"status": "live", "version": sent.version, "id": "AL-0002"}
    assert finding.theirs == {"mp_status": "inactive"}
    waiting = StatusChange.objects.get(seller=connected_seller, sent_at__isnull=True)
    assert (waiting.sku, waiting.status) == ("AL-0002", "live")
    # ... and the sender puts it back at the platform
    drain(connected_seller)
    assert at_platform(statuses_sent)["AL-0002"]["mp_status"] == "live"
    # The next pass finds nothing
    assert reconcile(connected_seller).findings_count == 0
    assert platform.sandbox.violations()["total"] == 0


def test_nothing_sent_costs_no_content_call(
    statuses_sent: CatalogWorld, connected_seller: Seller, platform: Platform, quiet_broker: Any
) -> None:
    # Given statuses sent longer ago than the window, but AL-0001's, whose new status
    # waits to be sent (its send is on its way: not judged)
    StatusSent.objects.filter(seller=connected_seller).exclude(sku="AL-0001").update(
        sent_at=timezone.now() - timedelta(days=30)
    )
    Listing.objects.filter(seller=connected_seller, sku="AL-0001").update(active=False)
    assert StatusChange.objects.filter(seller=connected_seller, sent_at__isnull=True).count() == 1
    since = last_seq(platform)
    # When a pass runs
    run = reconcile(connected_seller)
    # Then it asked the platform nothing
    assert (run.error, run.platform_calls, run.findings_count) == ("", 0, 0)
    assert content_calls(platform, since) == []


def test_a_failed_content_read_ends_the_pass_with_nothing_repaired(
    statuses_sent: CatalogWorld, connected_seller: Seller, platform: Platform, quiet_broker: Any
) -> None:
    # Given a drifted status, and the platform failing the Content API read
    statuses_sent.sandbox.db_rows_change(
        statuses_sent.db_id, rows=[{"id": "AL-0002", "mp_status": "inactive"}]
    )
    platform.sandbox.set_faults(endpoint="raw_data", kind="500", count=5)
    # When a pass runs
    run = reconcile(connected_seller)
    # Then the run says why, with the call counted, and nothing was found or re-queued
    assert run.error == "PlatformUnavailable: Internal server error (sandbox fault) · HTTP 500"
    assert run.platform_calls == 1
    assert run.findings_count == 0
    assert not StatusChange.objects.filter(seller=connected_seller, sent_at__isnull=True).exists()
    platform.sandbox.clear_faults()
