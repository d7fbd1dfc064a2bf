"""What the outbox engine's claim costs per item, for each kind (issue 32).

``python -m bench.outbox_claim [--items N] [--rounds R]``: N rows of each kind in the
bench database: order sync rows (orders with two lines, four connected sellers), return
steps, and one EDRTS sender per seller for N sellers. Each round makes every row due and
unclaimed again (untimed), then times ``outbox.claim.claim`` alone until every row is
claimed: drains take batches of the kind's size with ``SKIP LOCKED`` (the order push
builds each order's payload inside its claim); EDRTS claims one named seller at a time,
as its drains do. The sync's two claims through the same lease (``outbox/lease.py``) are
timed the same way over one ``SellerSync`` row per seller: the fan-out's claim of due
sellers (``schedule_claim_due``, batches of ``PULL_FAN_OUT_BATCH``, one statement each)
and the pull's lease of one seller (``lease_claim``). Prints the median milliseconds per
item over the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench.harness import (
    BenchEnvironment,
    orders_insert,
    platform_sellers_create,
    seller_connect,
    sellers_create,
)


def _drain_claims(kind: Any, model: Any, rounds: int, **due: Any) -> float:
    from django.utils import timezone

    from marketplace.outbox.claim import claim

    per_item: list[float] = []
    for _ in range(rounds):
        model.objects.update(
            claim_token="", lease_until=None, attempts=0, next_attempt_at=timezone.now(), **due
        )
        claimed = 0
        started = time.perf_counter()
        while batch := claim(kind, limit=kind.batch_size()).claims:
            claimed += len(batch)
        per_item.append((time.perf_counter() - started) / claimed)
    return statistics.median(per_item) * 1000


def run(env: BenchEnvironment, *, items: int, rounds: int) -> dict[str, float]:
    from django.utils import timezone

    from marketplace.catalog.listing_status.edrts_sender import EDRTS_SEND
    from marketplace.catalog.models import StatusSync
    from marketplace.orders.models import OrderSync
    from marketplace.orders.services.push import ORDER_PUSH
    from marketplace.outbox.claim import claim
    from marketplace.returns.models import PlatformStep
    from marketplace.returns.services.steps import RETURN_STEP

    assert env.sandbox is not None
    env.flush()
    env.sandbox.reset(keep_accounts=True)
    sellers = sellers_create(count=4, prefix="oc")
    names = platform_sellers_create(env.sandbox, sellers)
    for seller, name in zip(sellers, names, strict=True):
        seller_connect(env.sandbox, seller, name)
    orders_insert(seller_ids=[s.id for s in sellers], count=items, prefix="OC")
    PlatformStep.objects.bulk_create(
        PlatformStep(
            kind="push_return", seller_id=sellers[i % 4].id, next_attempt_at=timezone.now()
        )
        for i in range(items)
    )
    senders = sellers_create(count=items, prefix="ocs")
    StatusSync.objects.bulk_create(StatusSync(seller_id=s.id) for s in senders)

    push = _drain_claims(ORDER_PUSH, OrderSync, rounds, status="pending", pushed_version=0)
    step = _drain_claims(RETURN_STEP, PlatformStep, rounds, status="pending")
    per_item: list[float] = []
    for _ in range(rounds):
        StatusSync.objects.update(claim_token="", lease_until=None, attempts=0)
        started = time.perf_counter()
        for seller in senders:
            claim(EDRTS_SEND, keys=[seller.id], wait=False)
        per_item.append((time.perf_counter() - started) / len(senders))
    edrts = statistics.median(per_item) * 1000
    fan_out, pull = _sync_claims(senders, rounds)
    return {
        "order_push_ms": push,
        "return_step_ms": step,
        "edrts_send_ms": edrts,
        "sync_fan_out_ms": fan_out,
        "sync_pull_lease_ms": pull,
    }


def _sync_claims(sellers: list[Any], rounds: int) -> tuple[float, float]:
    """Per seller: the fan-out's claim of due sellers, and a pull's lease of one seller."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from marketplace.sync.models import SellerSync
    from marketplace.sync.pull_lease import lease_claim
    from marketplace.sync.schedule import schedule_claim_due

    SellerSync.objects.bulk_create(SellerSync(seller_id=s.id) for s in sellers)
    fan_out: list[float] = []
    pull: list[float] = []
    for _ in range(rounds):
        SellerSync.objects.update(
            next_pull_at=timezone.now() - timedelta(seconds=1), claim_token="", lease_until=None
        )
        claimed = 0
        started = time.perf_counter()
        while taken := schedule_claim_due(limit=settings.PULL_FAN_OUT_BATCH):
            claimed += len(taken)
        fan_out.append((time.perf_counter() - started) / claimed)
        started = time.perf_counter()
        for seller in sellers:
            assert lease_claim(seller_id=seller.id) is not None
        pull.append((time.perf_counter() - started) / len(sellers))
    return statistics.median(fan_out) * 1000, statistics.median(pull) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.outbox_claim", description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    env = BenchEnvironment(suffix="bench").start()
    try:
        result = run(env, items=args.items, rounds=args.rounds)
    finally:
        env.stop()
    for name, value in result.items():
        print(f"{name}: {value:.3f} ms per item claimed")


if __name__ == "__main__":
    main()
