"""P2 — token refresh: the sweep's selector at scale, and the vault's refresh throughput.

Selector: ``sellers.selectors.connections_due_for_refresh`` exactly as the sweep runs it
(ids, one batch of ``TOKEN_REFRESH_BATCH_SIZE``) with the same number of due connections
(``--due``) among 1k and then 100k stored ones; the others expire 1-24 h ahead. Indexed,
its time follows the due rows, not the table: goal ratio <= 2. Rows go in with COPY.

Throughput: ``connection_refresh`` (row lock, decrypt, Authlib POST, encrypt, save,
timeline event, call log) over N connections whose tokens are due, in C worker processes
(as Celery's prefork pool runs it), against a bare ``requests`` loop POSTing
``grant_type=refresh_token`` for N other grants from C threads. Goal: vault >= 0.8 x
baseline. CPU milliseconds per refresh of each side, the sandbox and Postgres are
reported too.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from datetime import timedelta
from typing import Any

from bench.cpu import CpuMeter
from bench.harness import (
    CLIENT_ID,
    CLIENT_SECRET,
    BenchEnvironment,
    bulk_insert,
    log,
    platform_sellers_create,
    seller_connect,
    sellers_create,
    timed,
)
from bench.threads import thread_session, threads_run


def _connections_insert(*, count: int, due: int, prefix: str) -> float:
    """``count`` connected sellers, ``due`` of them expiring now; returns rows/s."""
    from django.utils import timezone

    from sellers import vault
    from sellers.models import PlatformConnection

    started = time.perf_counter()
    sellers = sellers_create(count=count, prefix=prefix)
    now = timezone.now()
    cipher = vault.token_encrypt("bench-not-a-real-token")
    span = 23 * 3600

    def row(i: int, seller_id: int) -> dict[str, Any]:
        expires = (
            now + timedelta(seconds=30 + i % 60)
            if i < due
            else now + timedelta(seconds=3600 + (i * 7919) % span)
        )
        return {
            "seller_id": seller_id,
            "state": PlatformConnection.State.CONNECTED,
            "access_token_ciphertext": cipher,
            "refresh_token_ciphertext": cipher,
            "access_token_expires_at": expires,
            "refresh_token_expires_at": now + timedelta(days=300),
            "connected_at": now,
            "generation": 1,
        }

    bulk_insert(PlatformConnection, (row(i, s.id) for i, s in enumerate(sellers)))
    elapsed = time.perf_counter() - started
    return count * 3 / elapsed  # users + sellers + connections


def _select_due() -> list[int]:
    from django.conf import settings
    from django.utils import timezone

    from sellers.selectors import connections_due_for_refresh

    query = connections_due_for_refresh(now=timezone.now()).values_list("id", flat=True)
    return list(query[: settings.TOKEN_REFRESH_BATCH_SIZE])


def _explain() -> str:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from sellers.selectors import connections_due_for_refresh

    query = connections_due_for_refresh(now=timezone.now()).values_list("id", flat=True)
    query = query[: settings.TOKEN_REFRESH_BATCH_SIZE]
    if connection.vendor == "postgresql":
        return query.explain(analyze=True)
    return query.explain()


def _refresh_one(connection_id: int) -> str:
    from sellers.services import connection_refresh

    try:
        connection_refresh(connection_id=connection_id)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def _warm(_: int) -> int:
    """What a long-lived prefork child has done before its first task: a database
    connection and the token endpoint's keep-alive session (one per thread)."""
    from django.db import connection

    from marketplace.platform.oauth import TokenTransport
    from marketplace.platform.transport import thread_session

    connection.ensure_connection()
    thread_session(TokenTransport().base_url)
    return os.getpid()


def _processes(ids: list[int], concurrency: int, meter: CpuMeter) -> tuple[float, dict[str, float]]:
    """``connection_refresh`` of every id in ``concurrency`` worker processes, as Celery's
    prefork pool runs it; returns the seconds and the CPU ``meter`` read (pool included)."""
    from django.db import connections

    connections.close_all()  # children must not share the parent's socket
    context = multiprocessing.get_context("fork")
    with context.Pool(concurrency, initializer=connections.close_all) as pool:
        # Every child started and warm before the clock (chunksize 1: one call each).
        warmed = set(pool.map(_warm, range(concurrency * 4), chunksize=1))
        if len(warmed) < concurrency:
            log(f"P2: only {len(warmed)} of {concurrency} pool processes took a warm-up")
        meter.start()
        started = time.perf_counter()
        errors = [e for e in pool.map(_refresh_one, ids, chunksize=1) if e]
        elapsed = time.perf_counter() - started
        cpu = meter.stop()  # before the pool's children exit with their CPU counts
    if errors:
        raise RuntimeError(f"{len(errors)} refreshes failed: {errors[:3]}")
    return elapsed, cpu


def _per_call(cpu_seconds: dict[str, float], calls: int) -> dict[str, float]:
    return {name: round(seconds * 1000 / calls, 2) for name, seconds in cpu_seconds.items()}


def run(
    env: BenchEnvironment,
    *,
    small: int = 1000,
    large: int = 100_000,
    due: int = 200,
    refreshes: int = 200,
    concurrency: int = 4,
    repeat: int = 15,
) -> dict[str, Any]:
    from django.utils import timezone

    from sellers.models import PlatformConnection

    assert env.sandbox is not None
    sandbox = env.sandbox
    env.flush()
    sandbox.reset(keep_accounts=True)

    log(f"P2 selector: {small} stored connections ({due} due)")
    insert_rate = _connections_insert(count=small, due=due, prefix="p2a")
    small_seconds, small_ids = timed(_select_due, repeat=repeat)
    log(f"P2 selector: adding {large - small} connections")
    insert_rate_large = _connections_insert(count=large - small, due=0, prefix="p2b")
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE sellers_platformconnection")
    large_seconds, large_ids = timed(_select_due, repeat=repeat)
    if len(small_ids) != due or len(large_ids) != due:
        raise RuntimeError(f"selector found {len(small_ids)}/{len(large_ids)}, expected {due}")
    explain = _explain()

    # Throughput: real grants at the sandbox, half for the vault, half for the loop.
    log(f"P2 refresh: {refreshes} vault refreshes vs {refreshes} bare POSTs")
    PlatformConnection.objects.all().delete()
    sellers = sellers_create(count=refreshes, prefix="p2r")
    names = platform_sellers_create(sandbox, sellers[:1])
    for seller in sellers:
        seller_connect(sandbox, seller, names[0])
    baseline_tokens = [
        sandbox.mint_tokens(CLIENT_ID, names[0])["refresh_token"] for _ in range(refreshes)
    ]
    PlatformConnection.objects.update(access_token_expires_at=timezone.now())
    ids = list(PlatformConnection.objects.values_list("id", flat=True))

    token_url = sandbox.api_url + "/access_token"

    def bare(refresh_token: str) -> None:
        response = thread_session().post(
            token_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh_token,
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
            },
            timeout=(5, 20),
        )
        if response.status_code != 200 or "access_token" not in response.json():
            raise RuntimeError(f"refresh answered {response.status_code}")

    meter = CpuMeter(
        trees={"sandbox": sandbox.pid},
        pids={"client": os.getpid()},
        names={"postgres": "postgres"},
    )
    meter.start()
    baseline_seconds = threads_run(baseline_tokens, concurrency, bare, what="refreshes")
    baseline_cpu = meter.stop()
    # The vault runs in worker processes, as in production (Celery prefork): threads of
    # one process would measure Python's GIL, not the vault. The bare loop's client work
    # is light enough (see baseline_cpu_ms_per_refresh) that its threads are not limited.
    meter = CpuMeter(
        trees={"sandbox": sandbox.pid, "client": os.getpid()},
        names={"postgres": "postgres"},
    )
    vault_seconds, vault_cpu = _processes(ids, concurrency, meter)
    # The tree of this process includes the sandbox: count the vault's side alone.
    vault_cpu["client"] = round(vault_cpu["client"] - vault_cpu["sandbox"], 2)
    refreshed = PlatformConnection.objects.filter(
        access_token_expires_at__gt=timezone.now() + timedelta(minutes=30)
    ).count()
    if refreshed != refreshes:
        raise RuntimeError(f"only {refreshed} of {refreshes} connections were refreshed")
    reuse = sandbox.state()["counters"]["refresh_token_reuse"]

    result: dict[str, Any] = {
        "database": env.vendor,
        "stored_small": small,
        "stored_large": large,
        "due": due,
        "insert_rows_per_s": round(min(insert_rate, insert_rate_large)),
        "select_small_ms": round(small_seconds * 1000, 2),
        "select_large_ms": round(large_seconds * 1000, 2),
        "select_ratio": round(large_seconds / small_seconds, 2),
        "goal_select_ratio": 2.0,
        "explain": explain,
        "refreshes": refreshes,
        "concurrency": concurrency,
        "baseline_refreshes_per_s": round(refreshes / baseline_seconds, 1),
        "vault_refreshes_per_s": round(refreshes / vault_seconds, 1),
        "refresh_ratio": round(baseline_seconds / vault_seconds, 3),
        "goal_refresh_ratio": 0.8,
        "baseline_cpu_ms_per_refresh": _per_call(baseline_cpu, refreshes),
        "vault_cpu_ms_per_refresh": _per_call(vault_cpu, refreshes),
        "refresh_token_reuse": reuse,
    }
    result["goal_met"] = (
        result["select_ratio"] <= result["goal_select_ratio"]
        and result["refresh_ratio"] >= result["goal_refresh_ratio"]
        and reuse == 0
    )
    return result
