"""The beat sweeps: refreshing tokens about to expire, and refresh-token expiry warnings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection as db
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sellers import services, tasks
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from sellers.selectors import REFRESH_REQUEUE_AFTER, connections_due_for_refresh
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_tasks_inline(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """Queued refreshes run at once (the jittered countdown is recorded, not waited)."""
    queued: list[tuple[int, float]] = []

    def enqueue(connection_id: int, countdown: float) -> None:
        queued.append((connection_id, countdown))
        tasks.connection_refresh_task.run(connection_id)

    monkeypatch.setattr(services, "_enqueue_refresh", enqueue)
    return queued


def test_sweep_refreshes_a_connection_about_to_expire_and_leaves_fresh_ones(
    seller: Seller,
    other_seller: Seller,
    platform: Platform,
    run_tasks_inline: list,
    django_capture_on_commit_callbacks,
) -> None:
    expiring = platform.connect(seller)
    fresh = platform.connect(other_seller, who="bob-shop")
    PlatformConnection.objects.filter(id=expiring.id).update(
        access_token_expires_at=timezone.now() + timedelta(minutes=8)
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.connection_refresh_sweep_task.run() == 1

    assert [cid for cid, _ in run_tasks_inline] == [expiring.id]
    assert 0 <= run_tasks_inline[0][1] <= 30  # jittered countdown
    expiring_after = PlatformConnection.objects.get(id=expiring.id)
    assert expiring_after.access_token != expiring.access_token
    assert expiring_after.refresh_queued_at is None
    assert PlatformConnection.objects.get(id=fresh.id).access_token == fresh.access_token
    assert platform.refresh_requests() == 1


def test_sweep_does_not_queue_the_same_connection_twice_until_the_mark_is_old(
    seller: Seller, platform: Platform, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks,
) -> None:  # fmt: skip
    queued: list[int] = []
    monkeypatch.setattr(services, "_enqueue_refresh", lambda cid, countdown: queued.append(cid))
    connection = platform.connect(seller)
    PlatformConnection.objects.filter(id=connection.id).update(
        access_token_expires_at=timezone.now() + timedelta(minutes=3)
    )
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        services.connection_refresh_sweep(now=now)
        services.connection_refresh_sweep(now=now + timedelta(minutes=1))
        # The message was lost: after a while the database brings it back.
        services.connection_refresh_sweep(now=now + REFRESH_REQUEUE_AFTER + timedelta(seconds=1))
    assert queued == [connection.id, connection.id]


def test_sweep_works_in_bounded_batches(
    seller: Seller, other_seller: Seller, platform: Platform, settings,
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks,
) -> None:  # fmt: skip
    queued: list[int] = []
    monkeypatch.setattr(services, "_enqueue_refresh", lambda cid, countdown: queued.append(cid))
    settings.TOKEN_REFRESH_BATCH_SIZE = 1
    for who, s in (("alice-shop", seller), ("bob-shop", other_seller)):
        c = platform.connect(s, who=who)
        PlatformConnection.objects.filter(id=c.id).update(
            access_token_expires_at=timezone.now() + timedelta(minutes=2)
        )
    with django_capture_on_commit_callbacks(execute=True):
        assert services.connection_refresh_sweep() == 2
    assert len(queued) == 2


@pytest.mark.postgres
def test_sweep_query_uses_the_expiry_index() -> None:
    # Realistic shape: thousands of connected grants, a few of them due.
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"bulk{i}", password="!") for i in range(3000)
    )
    sellers = Seller.objects.bulk_create(Seller(user=u, display_name=u.username) for u in users)
    now = timezone.now()
    PlatformConnection.objects.bulk_create(
        PlatformConnection(
            seller=s,
            state="connected",
            access_token_expires_at=now + timedelta(minutes=5 if i % 300 == 0 else 30 + i % 30),
        )
        for i, s in enumerate(sellers)
    )
    with db.cursor() as cursor:
        cursor.execute("ANALYZE sellers_platformconnection")

    queryset = connections_due_for_refresh(now=now)[:500]
    plan = queryset.explain()

    assert "conn_access_expiry_idx" in plan, plan
    assert "Seq Scan" not in plan, plan
    assert len(queryset) == 10


# --- refresh-token expiry ---------------------------------------------------------------


def set_refresh_expiry(connection: PlatformConnection, delta: timedelta) -> None:
    PlatformConnection.objects.filter(id=connection.id).update(
        refresh_token_expires_at=timezone.now() + delta
    )


def sweep(days_from_now: float = 0) -> services.ExpirySweepResult:
    return services.refresh_token_expiry_sweep(now=timezone.now() + timedelta(days=days_from_now))


def test_warnings_go_out_30_7_and_1_day_before_each_once(
    seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    connection = platform.connect(seller)
    set_refresh_expiry(connection, timedelta(days=40))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep().warned == 0  # 40 days out: nothing yet
        assert sweep(days_from_now=11).warned == 1  # 29 days left
        assert sweep(days_from_now=12).warned == 0  # once
        assert sweep(days_from_now=33.5).warned == 1  # 6.5 days left
        assert sweep(days_from_now=34).warned == 0
        assert sweep(days_from_now=39.5).warned == 1  # 12 hours left
        assert sweep(days_from_now=39.6).warned == 0

    subjects = [m.subject for m in mail.outbox]
    assert subjects == [
        "Your platform authorization expires in 30 days",
        "Your platform authorization expires in 7 days",
        "Your platform authorization expires in 1 day",
    ]
    assert all(m.to == ["alice@example.com"] for m in mail.outbox)
    assert ConnectionEvent.objects.filter(seller=seller, kind="warning_sent").count() == 3


def test_a_late_first_sweep_sends_only_the_nearest_warning(
    seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    connection = platform.connect(seller)
    set_refresh_expiry(connection, timedelta(days=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep().warned == 1
        assert sweep().warned == 0
    assert [m.subject for m in mail.outbox] == ["Your platform authorization expires in 7 days"]


def test_expiry_warning_shows_on_the_portal(seller: Seller, platform: Platform) -> None:
    connection = platform.connect(seller)
    set_refresh_expiry(connection, timedelta(days=6, hours=1))
    client = Client()
    client.force_login(seller.user)
    page = client.get(reverse("sellers:portal")).content.decode()
    assert "expires on" in page
    assert "in 6 day(s)" in page


def test_lapsed_refresh_token_moves_to_needs_reauth(
    seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    connection = platform.connect(seller)
    set_refresh_expiry(connection, timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        result = sweep(days_from_now=0.1)
    assert result.lapsed == 1
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.NEEDS_REAUTH
    assert not connection.has_tokens
    assert any("reconnect" in m.subject.lower() for m in mail.outbox)
    assert tasks.refresh_token_expiry_sweep_task.run() == {"lapsed": 0, "warned": 0}


def test_reconnect_resets_the_warning_markers(
    seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    connection = platform.connect(seller)
    set_refresh_expiry(connection, timedelta(days=3))
    with django_capture_on_commit_callbacks(execute=True):
        sweep()
    connection = platform.connect(seller)
    assert connection.refresh_warning_7d_sent_at is None
    assert connection.refresh_warning_30d_sent_at is None
