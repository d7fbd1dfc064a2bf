"""Per seller, one ingest at a time and the files in the order they arrived (issue 22):
two deliveries at once both apply, in order, without a deadlock; an older file never
undoes a newer one (a staff retry says why); a transient database error is retried a
bounded number of times."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from django.db import OperationalError, connection

from marketplace.catalog.feeds import staging
from marketplace.catalog.feeds.ingest import FEED_LOCK_NAMESPACE, feed_run_ingest, feed_run_retry
from marketplace.catalog.models import FeedRun, Listing
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, gzipped, product_row

MakeRun = Callable[..., FeedRun]


def feed(first: int, last: int, price: str) -> bytes:
    return gzipped(csv_bytes(product_row(n, price=price) for n in range(first, last + 1)))


def prices(seller: Seller) -> dict[str, Decimal]:
    return dict(Listing.objects.filter(seller=seller).values_list("sku", "price"))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("started_first", ["older", "newer"])
def test_two_deliveries_at_once_both_apply_in_arrival_order(
    received_run: MakeRun, seller: Seller, started_first: str
) -> None:
    # Given two files of one seller with overlapping SKUs, delivered one after the other
    older = received_run(feed(1, 3000, "1.00"), compression="gzip")
    newer = received_run(feed(1001, 4000, "2.00"), compression="gzip")
    order = [older.pk, newer.pk] if started_first == "older" else [newer.pk, older.pk]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker(run_id: int) -> None:
        try:
            barrier.wait()
            feed_run_ingest(run_id=run_id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    # When two workers ingest them at the same moment
    threads = [threading.Thread(target=worker, args=(run_id,)) for run_id in order]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    # Then both succeeded, the older first, and the newer file's content wins
    assert errors == []
    older.refresh_from_db()
    newer.refresh_from_db()
    assert (older.status, newer.status) == ("succeeded", "succeeded"), (older.error, newer.error)
    assert older.finished_at is not None
    assert newer.finished_at is not None
    assert older.finished_at <= newer.finished_at
    assert (newer.created, newer.updated, newer.deactivated) == (1000, 2000, 1000)
    stored = dict(Listing.objects.filter(seller=seller, active=True).values_list("sku", "price"))
    assert len(stored) == 3000
    assert set(stored.values()) == {Decimal("2.00")}


@pytest.mark.django_db
def test_an_older_waiting_file_is_applied_before_the_newer_one(
    received_run: MakeRun, seller: Seller
) -> None:
    older = received_run(feed(1, 10, "1.00"), compression="gzip")
    newer = received_run(feed(1, 10, "2.00"), compression="gzip")

    # When the newer file's worker comes first
    finished = feed_run_ingest(run_id=newer.pk)

    # Then the older one was applied first, and the newer one over it
    assert finished is not None
    older.refresh_from_db()
    assert (older.status, finished.status) == ("succeeded", "succeeded")
    assert (finished.updated, finished.unchanged) == (10, 0)
    assert set(prices(seller).values()) == {Decimal("2.00")}
    assert feed_run_ingest(run_id=older.pk) is None  # its own task finds it done


@pytest.mark.django_db
def test_a_stale_retry_does_not_revert_the_catalog_and_says_why(
    received_run: MakeRun, seller: Seller, staff_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("marketplace.catalog.dispatch.feed_run_ingest_enqueue", lambda _: None)
    # Given an older file whose run failed (its file is fine), then a newer one applied
    older = received_run(feed(1, 10, "1.00"), compression="gzip")
    FeedRun.objects.filter(pk=older.pk).update(status="failed", error="database error")
    newer = received_run(feed(1, 10, "2.00"), compression="gzip")
    assert feed_run_ingest(run_id=newer.pk).status == "succeeded"  # type: ignore[union-attr]

    # When staff retry the older run
    feed_run_retry(run_id=older.pk, actor=staff_user)
    retried = feed_run_ingest(run_id=older.pk)

    # Then it is not applied, and the run says why
    assert retried is not None
    assert retried.status == "failed"
    assert retried.error.startswith(f"not applied: a newer file (run {newer.pk}) was already")
    assert (retried.created, retried.updated) == (0, 0)
    assert set(prices(seller).values()) == {Decimal("2.00")}


def _deadlock() -> OperationalError:
    error = OperationalError("deadlock detected")
    error.__cause__ = psycopg.errors.DeadlockDetected("deadlock detected")
    return error


@pytest.mark.django_db
def test_a_transient_database_error_is_retried(
    received_run: MakeRun, seller: Seller, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.FEED_INGEST_DB_BACKOFF = 0
    merge = staging.stage_merge
    calls: list[int] = []

    def flaky(*args: Any, **kwargs: Any) -> tuple[int, int]:
        calls.append(1)
        if len(calls) == 1:
            raise _deadlock()
        return merge(*args, **kwargs)

    monkeypatch.setattr(staging, "stage_merge", flaky)

    run = feed_run_ingest(run_id=received_run(feed(1, 5, "1.00"), compression="gzip").pk)

    assert run is not None
    assert (run.status, run.created, len(calls)) == ("succeeded", 5, 2)


@pytest.mark.django_db
def test_a_database_error_that_persists_fails_the_run_after_a_few_tries(
    received_run: MakeRun, seller: Seller, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.FEED_INGEST_DB_BACKOFF = 0
    settings.FEED_INGEST_DB_TRIES = 3
    calls: list[int] = []

    def always(*args: Any, **kwargs: Any) -> tuple[int, int]:
        calls.append(1)
        raise _deadlock()

    monkeypatch.setattr(staging, "stage_merge", always)

    run = feed_run_ingest(run_id=received_run(feed(1, 5, "1.00"), compression="gzip").pk)

    assert run is not None
    assert run.status == "failed"
    assert run.error.startswith("database error (tried 3 times): deadlock detected")
    assert len(calls) == 3
    assert not Listing.objects.filter(seller=seller).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_lost_connection_is_retried_with_the_seller_lock_taken_again(
    received_run: MakeRun, seller: Seller, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from django.db import connections

    settings.FEED_INGEST_DB_BACKOFF = 0
    merge = staging.stage_merge
    killed: list[int] = []
    held: list[bool] = []

    def killing(*args: Any, **kwargs: Any) -> tuple[int, int]:
        if not killed:
            # The database drops this worker's connection mid-run (a restart, a failover)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                killed.append(cursor.fetchone()[0])
            other = connections.create_connection("default")
            try:
                with other.cursor() as cursor:
                    cursor.execute("SELECT pg_terminate_backend(%s)", [killed[0]])
            finally:
                other.close()
        else:
            held.append(_seller_lock_held_here(seller.pk))
        return merge(*args, **kwargs)

    monkeypatch.setattr(staging, "stage_merge", killing)
    run = received_run(feed(1, 50, "1.00"), compression="gzip")

    finished = feed_run_ingest(run_id=run.pk)

    assert finished is not None
    assert (finished.status, finished.created) == ("succeeded", 50), finished.error
    assert Listing.objects.filter(seller=seller).count() == 50
    # The seller's lock was taken again on the new connection, and freed at the end
    assert held == [True]
    assert not _seller_lock_held_here(seller.pk)


def _seller_lock_held_here(seller_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND pid = pg_backend_pid() AND classid = %s AND objid = %s",
            [FEED_LOCK_NAMESPACE, seller_id],
        )
        return bool(cursor.fetchone()[0])
