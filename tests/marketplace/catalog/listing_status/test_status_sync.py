"""The EDRTS sender against the sandbox process (real HTTP): what it sends, in what
batches, only for products the seller's database holds, never an older status, through
a 429, and bounded failures. Drains are called as the worker would call them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.listing_status import edrts_sender
from marketplace.catalog.models import (
    CatalogSource,
    Listing,
    RejectedSku,
    StatusChange,
    StatusImport,
    StatusSent,
    StatusSync,
)
from marketplace.platform.edrts import EdrtsClient
from marketplace.platform.rate_budget import budget_acquire
from sellers.models import Seller
from tests.marketplace.catalog.platform import (
    API_USER,
    CatalogWorld,
    api_sign_in,
    catalog_world_create,
    edrts_source_create,
    product,
)
from tests.support.sandbox_process import SandboxProcess

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_violations")]


@pytest.fixture
def edrts_world(
    sandbox: SandboxProcess, settings: Any, seller: Seller, staff_user: Any
) -> Iterator[CatalogWorld]:
    """Alice's database of 400 products, the API user signed in, the seller linked to it
    with the default feed mapping (SKU from the product id); fast test pacing."""
    settings.EDRTS_RATE_PER_SECOND = 1000.0
    settings.EDRTS_LINGER_SECONDS = 0.0
    settings.EDRTS_BACKOFF_BASE = 0.01
    world = catalog_world_create(sandbox, settings, rows=0)
    sandbox.db_rows_change(world.db_id, add=[product(n) for n in range(1, 401)])
    api_sign_in(world, staff_user)
    edrts_source_create(world, seller)
    yield world
    sandbox.edrts_state(fail_next=0, lose_next=0)


def listed(seller: Seller, numbers: range, **fields: Any) -> list[Listing]:
    return Listing.objects.bulk_create(
        [
            Listing(seller=seller, sku=f"AL-{n:04d}", price="10.00", last_run_id=1, **fields)
            for n in numbers
        ]
    )


def drain_all(seller: Seller, timeout: float = 20.0) -> list[edrts_sender.DrainResult]:
    """Drain as the worker would, honouring each hand-over's countdown."""
    results = []
    deadline = time.monotonic() + timeout
    while StatusChange.objects.filter(seller=seller, sent_at__isnull=True).exists():
        assert time.monotonic() < deadline, "statuses still waiting"
        result = edrts_sender.status_sync_drain(seller_id=seller.pk)
        results.append(result)
        if result.again_in:
            time.sleep(result.again_in)
    return results


def products_at_platform(world: CatalogWorld) -> dict[str, dict[str, str]]:
    world.sandbox.edrts_wait_idle()
    return {row["id"]: row for row in world.sandbox.db_rows(world.db_id, per_page=1000)}


def test_statuses_reach_the_sellers_products_with_the_status_files_values(
    edrts_world: CatalogWorld, seller: Seller
) -> None:
    # Given two live listings, one whose latest row was rejected, a SKU rejected without
    # a listing, and a listing deactivated because the product left the database
    one, two, three, gone = listed(seller, range(1, 5))
    now = timezone.now()
    RejectedSku.objects.create(
        seller=seller, sku="AL-0003", reason="bad price", run_id=2, updated_at=now
    )
    RejectedSku.objects.create(
        seller=seller, sku="AL-0005", reason="no title", run_id=2, updated_at=now
    )
    edrts_world.sandbox.db_rows_change(edrts_world.db_id, delete=["AL-0004"])
    Listing.objects.filter(pk=gone.pk).update(active=False)

    # When the sender drains
    drain_all(seller)

    # Then each product holds what the status file says, and the gone one was not created
    rows = products_at_platform(edrts_world)
    assert "AL-0004" not in rows
    assert rows["AL-0001"]["mp_status"] == "live"
    assert rows["AL-0001"]["mp_listing_id"] == str(one.pk)
    assert rows["AL-0001"]["mp_listing_url"].endswith(f"/sellers/catalog/listings/{one.pk}/")
    assert rows["AL-0001"]["mp_updated_at"].endswith("Z")
    assert rows["AL-0001"]["mp_reason"] == ""
    assert (rows["AL-0003"]["mp_status"], rows["AL-0003"]["mp_reason"]) == ("rejected", "bad price")
    assert rows["AL-0003"]["mp_listing_id"] == str(three.pk)
    assert (rows["AL-0005"]["mp_status"], rows["AL-0005"]["mp_listing_id"]) == ("rejected", "")
    assert "mp_status" not in rows["AL-0006"] or rows["AL-0006"]["mp_status"] == ""
    assert StatusChange.objects.get(seller=seller, sku="AL-0004", status="inactive").outcome == (
        StatusChange.Outcome.SKIPPED
    )
    # The seller's own fields stay theirs
    assert rows["AL-0001"]["link"] == "https://alice.example.com/p/1"
    sync = StatusSync.objects.get(seller=seller)
    assert (sync.failures, sync.last_error) == (0, "")
    assert sync.last_sent_at is not None
    del two


def test_changes_of_one_product_are_coalesced_and_never_older_than_what_was_sent(
    edrts_world: CatalogWorld, seller: Seller
) -> None:
    (listing,) = listed(seller, range(1, 2))
    RejectedSku.objects.create(
        seller=seller, sku="AL-0001", reason="r1", run_id=2, updated_at=timezone.now()
    )
    RejectedSku.objects.filter(seller=seller).update(reason="r2")
    RejectedSku.objects.filter(seller=seller).delete()
    assert StatusChange.objects.filter(seller=seller).count() == 4
    before = edrts_world.sandbox.edrts_state()["stats"]

    drain_all(seller)

    after = edrts_world.sandbox.edrts_state()["stats"]
    assert after["requests"]["records_received"] - before["requests"]["records_received"] == 1
    assert products_at_platform(edrts_world)["AL-0001"]["mp_status"] == "live"
    outcomes = list(StatusChange.objects.filter(seller=seller).values_list("outcome", flat=True))
    assert outcomes == ["superseded", "superseded", "superseded", "sent"]

    # A change recorded after a newer one was sent (a late commit) is never sent
    sent = StatusSent.objects.get(seller=seller, sku="AL-0001")
    late = StatusChange.objects.create(
        seller=seller, sku="AL-0001", listing_id=listing.pk, status="rejected", reason="old"
    )
    StatusSent.objects.filter(pk=sent.pk).update(version=late.pk + 1)
    drain_all(seller)
    late.refresh_from_db()
    assert late.outcome == StatusChange.Outcome.SUPERSEDED
    assert products_at_platform(edrts_world)["AL-0001"]["mp_status"] == "live"


def test_requests_carry_50_to_150_records(edrts_world: CatalogWorld, seller: Seller) -> None:
    listed(seller, range(1, 401))
    before = edrts_world.sandbox.edrts_state()["stats"]["requests"]

    results = drain_all(seller)

    after = edrts_world.sandbox.edrts_state()["stats"]["requests"]
    assert after["requests"] - before["requests"] == 3
    assert after["records_received"] - before["records_received"] == 400
    assert sum(r.records for r in results) == 400
    assert len(products_at_platform(edrts_world)) == 400


def test_a_few_fresh_changes_linger_to_fill_a_request(
    edrts_world: CatalogWorld, seller: Seller, settings: Any
) -> None:
    settings.EDRTS_LINGER_SECONDS = 5.0
    listed(seller, range(1, 11))

    first = edrts_sender.status_sync_drain(seller_id=seller.pk)

    assert first.requests == 0
    assert 0 < (first.again_in or 0) <= 5.0
    settings.EDRTS_LINGER_SECONDS = 0.0
    assert edrts_sender.status_sync_drain(seller_id=seller.pk).records == 10


def test_a_request_waiting_for_its_turn_carries_what_arrived_meanwhile(
    edrts_world: CatalogWorld, seller: Seller, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the API user's EDRTS budget (a request every 2 s) just taken by another
    # drain, 10 changes waiting, and 30 more that commit while this drain waits its turn
    settings.EDRTS_RATE_PER_SECOND = 0.5
    budget_acquire(key=f"api-user:{API_USER[0]}:edrts:api", rate_per_second=0.5)
    listed(seller, range(1, 11))
    turn_take = EdrtsClient.turn_take
    waits: list[float] = []

    def arrivals_during_the_wait(client: EdrtsClient) -> float:
        if not waits:
            listed(seller, range(11, 41))
        waits.append(turn_take(client))
        return waits[-1]

    monkeypatch.setattr(EdrtsClient, "turn_take", arrivals_during_the_wait)
    before = edrts_world.sandbox.edrts_state()["stats"]["requests"]

    result = edrts_sender.status_sync_drain(seller_id=seller.pk)

    # Then its one request carried all 40: it was composed after the wait
    assert waits[0] > 0
    assert (result.requests, result.records) == (1, 40)
    after = edrts_world.sandbox.edrts_state()["stats"]["requests"]
    assert after["requests"] - before["requests"] == 1
    assert after["records_received"] - before["records_received"] == 40
    assert not StatusChange.objects.filter(seller=seller, sent_at__isnull=True).exists()


def test_a_429_mid_way_delays_but_loses_nothing(
    edrts_world: CatalogWorld, seller: Seller, settings: Any
) -> None:
    # Given the platform allows 2 EDRTS requests in a 2-second window
    settings.EDRTS_HOLD_MAX_WAIT = 0.0
    edrts_world.sandbox.set_rate_limit("edrts", 2, window_seconds=2)
    listed(seller, range(1, 401))

    results = drain_all(seller, timeout=30)

    # Then the drain handed over at least once with the platform's wait, and every
    # product holds its status; the sandbox counted no request inside the wait
    assert any(r.again_in and r.again_in > 0.1 for r in results)
    rows = products_at_platform(edrts_world)
    assert all(rows[f"AL-{n:04d}"]["mp_status"] == "live" for n in range(1, 401))
    assert StatusSync.objects.get(seller=seller).failures == 0
    edrts_world.sandbox.set_rate_limit("edrts", 300, window_seconds=60)


def test_failures_back_off_are_bounded_and_staff_retry(
    edrts_world: CatalogWorld, seller: Seller, settings: Any
) -> None:
    settings.EDRTS_MAX_FAILURES = 2
    listed(seller, range(1, 3))
    settings.PLATFORM_EDRTS_BASE_URL = "http://127.0.0.1:9/catalog/rest.php"

    first = edrts_sender.status_sync_drain(seller_id=seller.pk)
    assert first.again_in is not None
    StatusSync.objects.filter(seller=seller).update(next_attempt_at=None)
    second = edrts_sender.status_sync_drain(seller_id=seller.pk)

    sync = StatusSync.objects.get(seller=seller)
    assert second.again_in is None
    assert sync.failures == 2
    assert "waits for staff" in sync.last_error
    assert edrts_sender.status_sync_sweep() == 0  # stopped: the sweep leaves it
    assert StatusChange.objects.filter(seller=seller, sent_at__isnull=True).count() == 2

    settings.PLATFORM_EDRTS_BASE_URL = edrts_world.sandbox.edrts_url
    edrts_sender.status_sync_retry(seller_id=seller.pk)
    drain_all(seller)
    sync.refresh_from_db()
    assert (sync.failures, sync.last_error) == (0, "")


def test_staff_turn_edrts_off_and_on(edrts_world: CatalogWorld, seller: Seller) -> None:
    edrts_sender.status_sync_enable(seller_id=seller.pk, enabled=False)
    listed(seller, range(1, 4))
    before = edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"]

    edrts_sender.status_sync_drain(seller_id=seller.pk)

    assert edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"] == before
    assert set(StatusChange.objects.filter(seller=seller).values_list("outcome", flat=True)) == {
        "off"
    }

    # On again: every current status is sent
    edrts_sender.status_sync_enable(seller_id=seller.pk, enabled=True)
    drain_all(seller)
    rows = products_at_platform(edrts_world)
    assert [rows[f"AL-{n:04d}"]["mp_status"] for n in (1, 2, 3)] == ["live"] * 3


def test_a_seller_whose_sku_is_not_the_product_id_is_not_sent(
    edrts_world: CatalogWorld, seller: Seller
) -> None:
    CatalogSource.objects.filter(seller=seller).update(
        export_fields=[["sku", "gtin"], ["price", "price"]]
    )
    listed(seller, range(1, 3))
    before = edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"]

    edrts_sender.status_sync_drain(seller_id=seller.pk)

    assert edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"] == before
    assert "not the product id" in StatusSync.objects.get(seller=seller).last_error


def test_a_drain_while_backing_off_or_stopped_queues_nothing(
    edrts_world: CatalogWorld, seller: Seller, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[tuple[int, float]] = []
    monkeypatch.setattr(
        edrts_sender.dispatch,
        "status_sync_drain_enqueue",
        lambda seller_id, countdown=0.0: queued.append((seller_id, countdown)),
    )
    listed(seller, range(1, 3))
    edrts_sender.status_sync_of(seller_id=seller.pk)
    StatusSync.objects.filter(seller=seller).update(
        next_attempt_at=timezone.now() + timedelta(minutes=1)
    )

    assert edrts_sender.status_sync_drain(seller_id=seller.pk).held
    StatusSync.objects.filter(seller=seller).update(next_attempt_at=None, failures=99)
    assert edrts_sender.status_sync_drain(seller_id=seller.pk).held

    assert queued == []
    assert StatusChange.objects.filter(seller=seller, sent_at__isnull=True).count() == 2


def test_nothing_is_sent_before_the_status_import_ran_once(
    edrts_world: CatalogWorld, seller: Seller
) -> None:
    # Given the seller's import set up but never run (the mp_* fields do not exist yet)
    StatusImport.objects.filter(source__seller=seller).update(last_download_time="")
    requests_before = edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"]
    listed(seller, range(1, 4))

    # When the sender drains
    result = edrts_sender.status_sync_drain(seller_id=seller.pk)

    # Then it holds: no request, nothing settled, and the page says why
    assert result.held
    assert edrts_world.sandbox.edrts_state()["stats"]["requests"]["requests"] == requests_before
    assert StatusChange.objects.filter(seller=seller, sent_at__isnull=True).count() == 3
    assert StatusSync.objects.get(seller=seller).last_error == edrts_sender.WAITING_FOR_IMPORT

    # When the import has run: every waiting status goes out, and the note is gone
    StatusImport.objects.filter(source__seller=seller).update(
        last_download_time="2026-11-27 03:15:00"
    )
    drain_all(seller)
    rows = products_at_platform(edrts_world)
    assert {rows[f"AL-{n:04d}"]["mp_status"] for n in range(1, 4)} == {"live"}
    assert StatusSync.objects.get(seller=seller).last_error == ""


def test_signing_in_again_wakes_the_waiting_senders_at_once(
    edrts_world: CatalogWorld,
    seller: Seller,
    staff_user: Any,
    eager_tasks: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Given the API token revoked: the drain meets a 401 and waits for a sign-in
    edrts_world.sandbox.api_token_revoke(username=API_USER[0])
    listed(seller, range(1, 3))
    result = edrts_sender.status_sync_drain(seller_id=seller.pk)
    assert result.error
    assert result.again_in == 60.0  # the fallback, were nobody to sign in
    assert StatusSync.objects.get(seller=seller).waiting_for_access

    # When staff sign in again (the wake-up runs at commit, as a worker would at once)
    with django_capture_on_commit_callbacks(execute=True):
        api_sign_in(edrts_world, staff_user)

    # Then the statuses went out then, not a minute later
    sync = StatusSync.objects.get(seller=seller)
    assert (sync.waiting_for_access, sync.next_attempt_at, sync.last_error) == (False, None, "")
    assert not StatusChange.objects.filter(seller=seller, sent_at__isnull=True).exists()
    rows = products_at_platform(edrts_world)
    assert rows["AL-0001"]["mp_status"] == "live"
