"""The numbers of ``/metrics`` after a small flow, read back from the exposition; and the
cost of a scrape, which must not grow with the data."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from marketplace.catalog.models import FeedRun, PlatformApiAccess, StatusChange, StatusSync
from marketplace.metrics.views import exposition
from marketplace.orders.models import OrderSync
from marketplace.platform.models import HolderEmbargo, PlatformCall
from marketplace.returns.models import PlatformStep
from tests.marketplace.dashboard.builders import build_world
from tests.support.factories import OrderFactory, PlatformConnectionFactory, SellerSyncFactory

pytestmark = pytest.mark.django_db

TOKEN = "t" * 40
Status = OrderSync.Status
# The only labels any series has: fixed lists, never a seller or an order.
ALLOWED_LABELS = {"status", "kind", "state", "within_days", "le", "group", "reason", "of"}
ALLOWED_LABELS |= {"measure"}  # seller performance: the measures, a fixed list


def scrape(client: Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with override_settings(METRICS_TOKEN=TOKEN):
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        assert family.name.startswith("marketplace_"), family.name
        assert family.documentation, family.name
        for sample in family.samples:
            assert set(sample.labels) <= ALLOWED_LABELS, sample
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def _ago(**delta: float) -> Any:
    return timezone.now() - timedelta(**delta)


def test_the_numbers_after_a_small_flow_are_right(client: Client) -> None:
    now = timezone.now()
    # Given sellers in every situation an operator alerts on
    fresh = PlatformConnectionFactory(refresh_token_expires_at=now + timedelta(days=5))
    # idle and backed off: its next pull is in 20 minutes, so it is not late at all
    SellerSyncFactory(
        seller=fresh.seller,
        last_success_at=now - timedelta(seconds=30),
        next_pull_at=now + timedelta(minutes=20),
    )
    failing = PlatformConnectionFactory()
    SellerSyncFactory(
        seller=failing.seller,
        next_pull_at=now - timedelta(hours=2),  # its pull was due two hours ago
        last_success_at=now - timedelta(hours=2),
        consecutive_failures=3,
        last_error="PlatformUnavailable: 503",
    )
    # connected three days ago, never pulled; its refresh token expires tomorrow
    PlatformConnectionFactory(refresh_token_expires_at=now + timedelta(hours=20))
    reauth = PlatformConnectionFactory(needs_reauth=True)
    SellerSyncFactory(seller=reauth.seller, consecutive_failures=9)  # not connected
    PlatformConnectionFactory(disconnected=True)
    seller = fresh.seller

    # orders: two pushed, the rest waiting in each way, and one dead letter
    for _ in range(2):
        OrderFactory(seller=seller, sync=True, sync__status=Status.SYNCED, sync__pushed_version=1)
    OrderFactory(seller=seller, sync=True, sync__next_attempt_at=now - timedelta(seconds=30))
    OrderFactory(
        seller=seller,
        sync=True,
        sync__status=Status.RETRYING,
        sync__next_attempt_at=now - timedelta(seconds=120),
    )
    OrderFactory(
        seller=seller,
        sync=True,
        sync__status=Status.RETRYING,
        sync__next_attempt_at=now + timedelta(seconds=60),
    )
    OrderFactory(seller=seller, sync=True, sync__status=Status.WAITING_FOR_CONNECTION)
    OrderFactory(seller=seller, sync=True, sync__status=Status.FAILED, sync__failures=8)

    # platform calls of the last minutes (and one too old to count)
    calls = [
        ("PUT", "/orders/MP-1", 200),
        ("PUT", "/orders/MP-2", 200),
        ("GET", "/orders?limit=50", 200),
        ("GET", "/orders?limit=50", 503),
        ("PUT", "/orders/MP-3", None),
        ("POST", "/api/v1/access_token", 200),
        ("GET", "/dbs/7/exports/3", 500),
        ("POST", "/login", 429),
        ("GET", "/something-new", 200),
        ("PUT", "/db/7", 429),
    ]
    for method, path, status in calls:
        PlatformCall.objects.create(
            seller=seller, method=method, path=path, status=status, error="" if status else "t"
        )
    old = PlatformCall.objects.create(seller=seller, method="PUT", path="/orders/X", status=500)
    PlatformCall.objects.filter(pk=old.pk).update(created_at=now - timedelta(minutes=10))

    # EDRTS: two statuses waiting (the oldest 90 s), one sent; one seller's sender stopped
    waiting = [
        StatusChange.objects.create(seller=seller, sku=f"SKU-{n}", status="live") for n in (1, 2)
    ]
    StatusChange.objects.filter(pk=waiting[0].pk).update(created_at=now - timedelta(seconds=90))
    StatusChange.objects.create(seller=seller, sku="SKU-3", status="live", sent_at=now)
    StatusSync.objects.create(seller=failing.seller, failures=settings.EDRTS_MAX_FAILURES)
    StatusSync.objects.create(seller=seller, failures=1)

    # returns and refunds: two platform calls waiting (the oldest 60 s), one done, one failed
    Kind, StepState = PlatformStep.Kind, PlatformStep.Status
    steps = [
        PlatformStep.objects.create(kind=Kind.COMPLETE_REFUND, seller=seller, status=state)
        for state in (StepState.PENDING, StepState.RETRYING, StepState.DONE, StepState.FAILED)
    ]
    PlatformStep.objects.filter(pk=steps[1].pk).update(created_at=now - timedelta(seconds=60))

    # embargoes: two sellers held, the API user's hold already over
    HolderEmbargo.objects.create(holder="seller:101", not_before=now + timedelta(seconds=120))
    HolderEmbargo.objects.create(holder="seller:102", not_before=now + timedelta(seconds=30))
    HolderEmbargo.objects.create(holder="api-user:mp", not_before=now - timedelta(seconds=5))

    # feed runs: two failed today, one failed two days ago, one held, one fine
    def run(**fields: Any) -> FeedRun:
        return FeedRun.objects.create(seller=seller, file_path="feeds/x.csv", **fields)

    run(status=FeedRun.Status.FAILED, malformed=True, error="not a CSV file")
    run(status=FeedRun.Status.FAILED, error="the worker stopped while ingesting this file 3 times")
    stale = run(status=FeedRun.Status.FAILED, error="ingestion error: boom")
    FeedRun.objects.filter(pk=stale.pk).update(received_at=now - timedelta(days=2))
    run(status=FeedRun.Status.HELD, error="would deactivate 80 % of the listings")
    run(status=FeedRun.Status.SUCCEEDED)
    PlatformApiAccess.objects.create(pk=1, state=PlatformApiAccess.State.NEEDS_SIGN_IN)

    # When Prometheus scrapes
    samples = scrape(client)

    # Then every number is right
    assert value(samples, "marketplace_orders_waiting_to_push", status="pending") == 1
    assert value(samples, "marketplace_orders_waiting_to_push", status="retrying") == 2
    assert (
        value(samples, "marketplace_orders_waiting_to_push", status="waiting_for_connection") == 1
    )
    assert value(samples, "marketplace_orders_push_due") == 2
    assert 120 <= value(samples, "marketplace_orders_push_oldest_wait_seconds") < 150
    assert value(samples, "marketplace_dead_letters", kind="order_push") == 1
    assert value(samples, "marketplace_dead_letters", kind="edrts") == 1
    assert value(samples, "marketplace_edrts_statuses_waiting") == 2
    assert 90 <= value(samples, "marketplace_edrts_statuses_oldest_wait_seconds") < 150

    assert value(samples, "marketplace_connections", state="connected") == 3
    assert value(samples, "marketplace_connections", state="needs_reauth") == 1
    assert value(samples, "marketplace_connections", state="disconnected") == 1
    assert value(samples, "marketplace_grants_needing_reauthorization") == 1
    assert value(samples, "marketplace_refresh_tokens_expiring", within_days="1") == 1
    assert value(samples, "marketplace_refresh_tokens_expiring", within_days="7") == 2
    assert value(samples, "marketplace_refresh_tokens_expiring", within_days="14") == 2

    lag = "marketplace_pull_lag_seconds_bucket"
    assert value(samples, lag, le="60.0") == 1  # not due yet: 0 s overdue
    assert value(samples, lag, le="3600.0") == 1
    assert value(samples, lag, le="21600.0") == 2  # + failing: due 2 h ago
    assert value(samples, lag, le="86400.0") == 2  # never scheduled: connected 3 days ago
    assert value(samples, lag, le="+Inf") == 3
    assert value(samples, "marketplace_pull_lag_seconds_gcount") == 3
    expected_sum = 0 + 2 * 3600 + 3 * 86400
    assert expected_sum <= value(samples, "marketplace_pull_lag_seconds_gsum") < expected_sum + 60
    assert value(samples, "marketplace_sellers_pulls_failing") == 1  # not the re-auth one

    calls_recent = "marketplace_platform_calls_recent"
    assert value(samples, calls_recent, group="orders", status="200") == 3
    assert value(samples, calls_recent, group="orders", status="503") == 1
    assert value(samples, calls_recent, group="orders", status="none") == 1
    assert ("marketplace_platform_calls_recent", (("group", "orders"), ("status", "500"))) not in (
        samples
    )
    assert value(samples, calls_recent, group="oauth", status="200") == 1
    assert value(samples, calls_recent, group="platform_api", status="500") == 1
    assert value(samples, calls_recent, group="auth_api", status="429") == 1
    assert value(samples, calls_recent, group="other", status="200") == 1
    assert value(samples, calls_recent, group="edrts", status="429") == 1
    assert value(samples, "marketplace_metrics_window_seconds", of="platform_calls") == 300

    assert 110 < value(samples, "marketplace_embargo_remaining_seconds", group="orders") <= 120
    assert value(samples, "marketplace_embargoed_holders", group="orders") == 2
    assert value(samples, "marketplace_embargo_remaining_seconds", group="api_user") == 0
    assert value(samples, "marketplace_embargoed_holders", group="api_user") == 0

    failed = "marketplace_feed_runs_failed_recent"
    assert value(samples, failed, reason="malformed") == 1
    assert value(samples, failed, reason="worker_lost") == 1
    assert value(samples, failed, reason="ingestion_error") == 0  # two days ago
    assert value(samples, "marketplace_feed_runs_held") == 1
    assert value(samples, "marketplace_platform_api_needs_sign_in") == 1

    assert value(samples, "marketplace_refunds_waiting") == 2
    assert 60 <= value(samples, "marketplace_refunds_oldest_wait_seconds") < 120
    assert value(samples, "marketplace_dead_letters", kind="refund") == 1


def test_an_empty_database_reports_zeros_not_gaps(client: Client) -> None:
    samples = scrape(client)
    assert value(samples, "marketplace_orders_push_oldest_wait_seconds") == 0
    assert value(samples, "marketplace_dead_letters", kind="order_push") == 0
    assert value(samples, "marketplace_pull_lag_seconds_bucket", le="+Inf") == 0
    assert value(samples, "marketplace_embargo_remaining_seconds", group="orders") == 0
    assert value(samples, "marketplace_platform_api_needs_sign_in") == 0


def test_a_scrape_costs_the_same_queries_whatever_the_data_size() -> None:
    # Given a small world, then ten times more sellers and orders (calls, pulls, problems)
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            exposition()
        return len(captured.captured_queries)

    build_world(sellers=3, orders=10, prefix="s")
    small = queries()
    build_world(sellers=30, orders=100, prefix="l")
    for index in range(5):
        HolderEmbargo.objects.create(holder=f"seller:{index}", not_before=_ago(seconds=-60))
    large = queries()
    # Then the scrape makes the same, small number of queries
    assert small == large
    # 16 reads (2 of seller performance, 3 of reconciliation), setting and restoring the
    # statement timeout, a savepoint
    assert large <= 20


def test_the_scrapes_statement_timeout_ends_with_the_scrape() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("a Postgres setting")

    def timeout() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            return cursor.fetchone()[0]

    # Given a transaction that goes on after the scrape (as a test's does)
    before = timeout()
    exposition()
    # Then the scrape's own limit is gone once it has answered
    assert timeout() == before


def test_the_hooks_report_under_the_names_the_rules_and_dashboard_read(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from marketplace.metrics import readings
    from marketplace.metrics.collector import HOOK_METRIC_NAMES

    # Given EDRTS and refunds wired into their hooks
    monkeypatch.setattr(readings, "edrts_statuses_waiting", lambda now: readings.Waiting(3, 42.0))
    monkeypatch.setattr(readings, "refunds_waiting", lambda now: readings.Waiting(1, 5.0))
    monkeypatch.setattr(readings, "more_dead_letters", lambda now: {"refund": 2})
    # When Prometheus scrapes
    samples = scrape(client)
    # Then each is reported under the names deploy/ already reads
    assert {name for name, _ in samples} >= HOOK_METRIC_NAMES
    assert value(samples, "marketplace_edrts_statuses_waiting") == 3
    assert value(samples, "marketplace_edrts_statuses_oldest_wait_seconds") == 42
    assert value(samples, "marketplace_refunds_waiting") == 1
    assert value(samples, "marketplace_refunds_oldest_wait_seconds") == 5
    assert value(samples, "marketplace_dead_letters", kind="refund") == 2
    assert value(samples, "marketplace_dead_letters", kind="order_push") == 0
