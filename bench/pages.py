"""P4 — dashboard pages at 100 sellers / 2k orders and at 10k sellers / 200k orders.

The overview, the sellers list and one seller's detail page are rendered with Django's
test ``Client`` (in process: server time without a network), signed in as staff. For
each page: the number of SQL queries (``CaptureQueriesContext``; must be equal at both
sizes, i.e. no query per row) and the median server time of several renders (goal: the
large data set at most 2x the small one).

Data goes in with COPY (Postgres) / executemany (SQLite) in batches: sellers with a
connection (a few needing re-authorization), a pull state and two timeline events;
orders with a line, a sync row (mostly synced; some pending, retrying and failed), a
sync event and a platform call in the last 24 h; an open validation problem on 1 %.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from typing import Any

from bench.harness import BenchEnvironment, bulk_insert, log, orders_insert, sellers_create

PAGES = (
    ("overview", "dashboard:overview", False),
    ("sellers", "dashboard:sellers", False),
    ("seller_detail", "dashboard:seller", True),
)


def _populate(*, sellers: int, orders: int) -> tuple[int, float]:
    """Returns a typical seller's id and the seconds generation took."""
    from django.utils import timezone

    from marketplace.orders.models import SyncEvent, ValidationProblem
    from marketplace.platform.models import PlatformCall
    from marketplace.sync.models import SellerSync
    from sellers import vault
    from sellers.models import ConnectionEvent, PlatformConnection

    started = time.perf_counter()
    rng = random.Random(7)
    now = timezone.now()
    seller_rows = sellers_create(count=sellers, prefix=f"p4-{sellers}")
    seller_ids = [s.id for s in seller_rows]
    cipher = vault.token_encrypt("bench-not-a-real-token")
    bulk_insert(
        PlatformConnection,
        (
            {
                "seller_id": sid,
                "state": "needs_reauth" if i % 50 == 7 else "connected",
                "access_token_ciphertext": "" if i % 50 == 7 else cipher,
                "refresh_token_ciphertext": "" if i % 50 == 7 else cipher,
                "access_token_expires_at": now + timedelta(minutes=i % 60),
                "refresh_token_expires_at": now + timedelta(days=20 + i % 300),
                "connected_at": now - timedelta(days=30),
                "generation": 1,
            }
            for i, sid in enumerate(seller_ids)
        ),
    )
    bulk_insert(
        SellerSync,
        (
            {
                "seller_id": sid,
                "cursor": now - timedelta(minutes=2),
                "last_started_at": now - timedelta(minutes=2),
                "last_finished_at": now - timedelta(minutes=1),
                "last_success_at": now - timedelta(minutes=1),
            }
            for sid in seller_ids
        ),
    )
    bulk_insert(
        ConnectionEvent,
        (
            {"seller_id": sid, "kind": kind, "detail": "bench", "created_at": now}
            for sid in seller_ids
            for kind in ("connected", "refreshed")
        ),
    )

    def sync_row(order_id: int) -> dict[str, Any]:
        roll = rng.random()
        status = (
            "synced"
            if roll < 0.9
            else "pending"
            if roll < 0.95
            else "retrying"
            if roll < 0.98
            else "failed"
        )
        synced = status == "synced"
        return {
            "order_id": order_id,
            "status": status,
            "desired_version": 1,
            "pushed_version": 1 if synced else 0,
            "failures": 0 if synced else 3,
            "next_attempt_at": None
            if status in ("synced", "failed")
            else now + timedelta(seconds=rng.randint(-300, 300)),
            "last_error": "" if synced else "platform unavailable (503)",
            "last_pushed_at": now if synced else None,
        }

    order_ids = orders_insert(
        seller_ids=seller_ids,
        count=orders,
        prefix=f"P4-{sellers}",
        lines_per_order=1,
        sync_row=sync_row,
    )
    bulk_insert(
        SyncEvent,
        (
            {
                "order_id": oid,
                "kind": "pushed",
                "version": 1,
                "message": "platform has the order as AWAITING_SHIPMENT",
                "created_at": now - timedelta(seconds=rng.randint(0, 86_000)),
            }
            for oid in order_ids
        ),
    )
    bulk_insert(
        PlatformCall,
        (
            {
                "seller_id": seller_ids[i % len(seller_ids)],
                "order_number": f"P4-{sellers}-{i:07d}",
                "method": "PUT",
                "path": f"/api/v1/orders/P4-{sellers}-{i:07d}",
                "status": 200 if i % 40 else 503,
                "duration_ms": 20 + i % 50,
                "created_at": now - timedelta(seconds=rng.randint(0, 86_000)),
            }
            for i in range(orders)
        ),
    )
    bulk_insert(
        ValidationProblem,
        (
            {
                "order_id": oid,
                "code": "UNKNOWN_CARRIER",
                "mp_line_number": "1",
                "message": "carrier not recognised",
                "fingerprint": f"{oid:064x}",
                "last_seen_at": now,
                "reported_at": now,
            }
            for oid in order_ids[::100]
        ),
    )
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return seller_ids[len(seller_ids) // 2], time.perf_counter() - started


def _measure(seller_id: int, repeat: int) -> dict[str, Any]:
    import statistics

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    staff, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(staff)
    figures: dict[str, Any] = {}
    for key, name, per_seller in PAGES:
        url = reverse(name, args=[seller_id] if per_seller else [])
        response = client.get(url)  # warm-up (template loading, first queries)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        # Read now: the next request's request_started signal clears the query log.
        queries = len(captured.captured_queries)
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            client.get(url)
            samples.append(time.perf_counter() - started)
        figures[key] = {
            "url": url,
            "queries": queries,
            "ms": round(statistics.median(samples) * 1000, 1),
            "bytes": len(response.content),
        }
    return figures


def run(
    env: BenchEnvironment,
    *,
    small_sellers: int = 100,
    small_orders: int = 2000,
    large_sellers: int = 10_000,
    large_orders: int = 200_000,
    repeat: int = 5,
) -> dict[str, Any]:
    sizes = {"small": (small_sellers, small_orders), "large": (large_sellers, large_orders)}
    measured: dict[str, Any] = {}
    generation: dict[str, float] = {}
    for label, (sellers, orders) in sizes.items():
        env.flush()
        log(f"P4 generating {sellers} sellers / {orders} orders")
        seller_id, seconds = _populate(sellers=sellers, orders=orders)
        generation[label] = round(seconds, 1)
        log(f"P4 generated in {seconds:.0f}s; rendering pages")
        measured[label] = _measure(seller_id, repeat)
    pages: dict[str, Any] = {}
    for key, _, _ in PAGES:
        small, large = measured["small"][key], measured["large"][key]
        pages[key] = {
            "queries_small": small["queries"],
            "queries_large": large["queries"],
            "ms_small": small["ms"],
            "ms_large": large["ms"],
            "ratio": round(large["ms"] / small["ms"], 2),
        }
    result: dict[str, Any] = {
        "database": env.vendor,
        "small": {"sellers": small_sellers, "orders": small_orders},
        "large": {"sellers": large_sellers, "orders": large_orders},
        "generation_seconds": generation,
        "pages": pages,
        "goal_ratio": 2.0,
    }
    result["goal_met"] = all(
        p["queries_small"] == p["queries_large"] and p["ratio"] <= 2.0 for p in pages.values()
    )
    return result
