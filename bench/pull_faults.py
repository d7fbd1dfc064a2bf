"""``python -m bench.pull_faults``: shipments made while 30 % of the platform's answers
are faults reach the marketplace within three pull intervals, and no request for a
seller arrives before a ``Retry-After`` the platform gave that seller has passed.

Two Celery worker processes (one of them runs beat, which pulls every seller every
``--pull-interval`` seconds) push the orders, then the sandbox starts failing a share of
*every* platform call: 429 and 503 with ``Retry-After``, 500, 502 and unreadable JSON.
While it does, the sandbox's simulated seller ships the orders in waves. For each order
the run notes when it was shipped and when the marketplace stored the shipment (its
``fulfillment_stored`` event), and at the end reads the sandbox's violation count.

Exits 1 when a shipment arrived later than three intervals, one never arrived, or the
sandbox counted a violation. ``--smoke`` is the CI size (about a minute).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.harness import (
    BenchEnvironment,
    log,
    orders_insert,
    platform_sellers_create,
    seller_connect,
    sellers_create,
    wait_until,
)


def fault_rules(rate: float, seed: int = 29) -> list[dict[str, Any]]:
    """``rate`` of every platform call fails, in this mix (rules are tried in order)."""
    share = {
        "rate_limit": 0.3,
        "unavailable": 0.2,
        "server_error": 0.2,
        "bad_gateway": 0.15,
        "malformed_json": 0.15,
    }
    rules = []
    taken = 0.0
    for n, (kind, part) in enumerate(share.items()):
        # Rules are tried in order: each one's probability is of the calls left to it.
        probability = rate * part / (1 - taken)
        taken += rate * part
        rule: dict[str, Any] = {
            "endpoint": "*",
            "kind": kind,
            "probability": round(probability, 4),
            "seed": seed + n,
        }
        if kind in ("rate_limit", "unavailable"):
            rule["retry_after"] = 1
        rules.append(rule)
    return rules


def _stored_at(order_ids: list[int]) -> dict[int, datetime]:
    from django.db.models import Min

    from marketplace.orders.models import SyncEvent

    rows = (
        SyncEvent.objects.filter(order_id__in=order_ids, kind=SyncEvent.Kind.FULFILLMENT_STORED)
        .values("order_id")
        .annotate(first=Min("created_at"))
    )
    return {row["order_id"]: row["first"] for row in rows}


def run(env: BenchEnvironment, args: argparse.Namespace) -> dict[str, Any]:
    from marketplace.orders.models import Order, OrderSync
    from marketplace.orders.services.outbox import PUSH_DOORBELL

    assert env.sandbox is not None
    sandbox = env.sandbox
    sellers = sellers_create(count=args.sellers, prefix="faults")
    names = platform_sellers_create(sandbox, sellers)
    for seller, name in zip(sellers, names, strict=True):
        seller_connect(sandbox, seller, name)
    worker_env = {"PULL_INTERVAL_SECONDS": str(args.pull_interval)}
    workers = [
        env.worker(concurrency=2, name="faults-a", beat=True, env=worker_env),
        env.worker(concurrency=2, name="faults-b", env=worker_env),
    ]
    for worker in workers:
        worker.start()

    ids = orders_insert(seller_ids=[s.id for s in sellers], count=args.orders, prefix="FLT")
    PUSH_DOORBELL.ring(force=True)
    wait_until(
        lambda: OrderSync.objects.filter(order_id__in=ids, status="synced").count() == len(ids),
        timeout=120,
        interval=0.5,
        what="every order pushed",
    )
    log(f"{len(ids)} orders at the platform; faults on ({args.fault_rate:.0%} of calls)")
    sandbox.set_faults(*fault_rules(args.fault_rate))

    orders = list(Order.objects.filter(id__in=ids).select_related("seller__user").order_by("id"))
    name_of = {s.id: n for s, n in zip(sellers, names, strict=True)}
    shipped_at: dict[int, datetime] = {}
    waves = max(1, args.waves)
    per_wave = -(-len(orders) // waves)
    for wave in range(waves):
        for order in orders[wave * per_wave : (wave + 1) * per_wave]:
            sandbox.ship(order.mp_order_number, seller=name_of[order.seller_id])
            shipped_at[order.id] = datetime.now(UTC)
        if wave < waves - 1:
            time.sleep(args.wave_seconds)
    limit = 3 * args.pull_interval
    deadline_wait = limit + 10
    try:
        wait_until(
            lambda: len(_stored_at(ids)) == len(ids),
            timeout=deadline_wait,
            interval=0.5,
            what="every shipment stored",
        )
    except Exception as exc:  # reported below, order by order
        log(f"not every shipment arrived: {exc}")
    stored = _stored_at(ids)
    violations = sandbox.violations()
    faults = sandbox.faults()
    sandbox.clear_faults()
    for worker in workers:
        worker.stop()

    delays = {oid: (stored[oid] - shipped_at[oid]).total_seconds() for oid in ids if oid in stored}
    missing = [oid for oid in ids if oid not in stored]
    late = {oid: round(d, 1) for oid, d in delays.items() if d > limit}
    result = {
        "orders": len(ids),
        "sellers": len(sellers),
        "workers": len(workers),
        "fault_rate": args.fault_rate,
        "faults_fired": sum(rule.get("fired", 0) for rule in faults),
        "pull_interval_s": args.pull_interval,
        "limit_s": limit,
        "max_delay_s": round(max(delays.values()), 1) if delays else None,
        "median_delay_s": round(sorted(delays.values())[len(delays) // 2], 1) if delays else None,
        "late": len(late),
        "missing": len(missing),
        "violations": violations["total"],
        "violations_by_kind": violations.get("by_kind", {}),
        "recent_violations": violations.get("recent", [])[:5],
    }
    result["goal_met"] = not late and not missing and violations["total"] == 0
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.pull_faults", description=__doc__)
    add = parser.add_argument
    add("--orders", type=int, default=90)
    add("--sellers", type=int, default=3)
    add("--fault-rate", type=float, default=0.3)
    add("--pull-interval", type=float, default=8.0)
    add("--waves", type=int, default=4)
    add("--wave-seconds", type=float, default=5.0)
    add("--smoke", action="store_true", help="the CI size")
    add("--output", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.smoke:
        args.orders, args.waves, args.wave_seconds = 30, 3, 4.0
    env = BenchEnvironment(suffix="pull_faults", settings_module="bench.soak_settings").start()
    try:
        result = run(env, args)
    finally:
        env.stop()
    text = json.dumps(result, indent=2, default=str)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return 0 if result["goal_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
