"""The overview's heavy aggregates come from a snapshot the beat job refreshes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.dashboard.activity import activity_current, activity_snapshot_refresh
from marketplace.dashboard.models import ActivitySnapshot
from marketplace.dashboard.tasks import activity_snapshot_task
from marketplace.orders.models import OrderSync
from tests.marketplace.dashboard.builders import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def snapshots_on(settings: Any) -> None:
    settings.DASHBOARD_ACTIVITY_MAX_AGE = 60


def tally(activity: Any, status: str) -> int:
    return next(t.count for t in activity.sync_counts if t.value == status)


def test_overview_reads_the_snapshot_until_it_is_stale(snapshots_on: None, staff_user: Any) -> None:
    build_world(sellers=3, orders=10)
    now = timezone.now()
    first = activity_current(now=now)  # no snapshot yet: computed and stored
    assert ActivitySnapshot.objects.count() == 1
    failed = tally(first, "failed")
    OrderSync.objects.update(status="failed")

    # Within the max age the page shows the snapshot (and says as of when) ...
    cached = activity_current(now=now + timedelta(seconds=30))
    assert tally(cached, "failed") == failed
    assert cached.computed_at == first.computed_at
    # ... once it is stale (the beat job stopped), the page recomputes.
    fresh = activity_current(now=now + timedelta(seconds=61))
    assert tally(fresh, "failed") == 10
    assert ActivitySnapshot.objects.count() == 1  # older snapshots are dropped


def test_beat_job_refreshes_the_snapshot_the_page_shows(
    snapshots_on: None, staff_user: Any
) -> None:
    build_world(sellers=3, orders=10)
    activity_snapshot_refresh()
    OrderSync.objects.update(status="failed")
    activity_snapshot_task()
    activity = activity_current(now=timezone.now())
    assert tally(activity, "failed") == 10
    assert sum(b.pushes + b.pulls for b in activity.chart) > 0


def test_overview_from_a_snapshot_costs_the_same_queries_at_any_size(
    snapshots_on: None, staff_user: Any, django_assert_max_num_queries: Any
) -> None:
    client = Client()
    client.force_login(staff_user)
    for sellers, orders in ((3, 10), (30, 300)):
        build_world(sellers=sellers, orders=orders, prefix=f"s{sellers}")
        activity_snapshot_refresh()
        # 8, plus the one live read of what people act on (one statement of index probes),
        # plus the reconciliation panel's two (open findings, the last day's: both indexed)
        with django_assert_max_num_queries(11):
            response = client.get("/dashboard/")
        assert response.status_code == 200
        assert b"activity-as-of" in response.content


def test_what_staff_act_on_is_live_while_the_rest_is_a_snapshot(
    snapshots_on: None, staff_user: Any
) -> None:
    from marketplace.dashboard.overview import overview_get
    from sellers.models import PlatformConnection

    # Given a fresh snapshot
    build_world(sellers=3, orders=10)
    now = timezone.now()
    activity_snapshot_refresh()
    before = overview_get(now=now)
    # When orders become dead letters and a seller must reconnect after it was taken
    OrderSync.objects.update(status="failed", next_attempt_at=None)
    PlatformConnection.objects.filter(
        pk=PlatformConnection.objects.filter(state="connected").first().pk
    ).update(state="needs_reauth")
    after = overview_get(now=now + timedelta(seconds=5))
    # Then those cards change at once; the whole-population tallies wait for the snapshot
    assert tally(after, "failed") == 10
    needs_reauth = {t.value: t.count for t in after.connections}["needs_reauth"]
    assert needs_reauth == {t.value: t.count for t in before.connections}["needs_reauth"] + 1
    assert tally(after, "synced") == tally(before, "synced")
    assert after.activity_at == before.activity_at
