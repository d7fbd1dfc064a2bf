"""P7 — pulling sellers' refunds against history: 10 new refunds, with 100 vs 10 000
completed refunds behind them.

Two sellers, each given a history of ``small`` and ``large`` orders with one seller refund
each, ``COMPLETE`` long ago, on both sides (the sandbox's bulk history call with
``refund_status``; bulk inserts here, decided and completed). Each seller's returns pull
runs once. Each round places ``new`` orders per seller at the sandbox, ships them, has the
seller refund a line of each (the control API), one of them above what the buyer paid,
and has the seller correct the refund the previous round paused (the refund lifecycle:
it comes back ``CREATED`` and is decided again). Then it times one returns/refunds pull of
each seller, counting the requests the sandbox saw (then the outbox runs, untimed, as a
worker would: complete the accepted, pause the refused).

The listing asks for ``refund_status=CREATED`` only (the reference has no update-time
filter), so the set read is the open work: history costs no request, and a corrected
refund is found although its creation date is old. Goals: the same requests for both
sellers, time <= 1.2x.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.harness import (
    CLIENT_ID,
    BenchEnvironment,
    bulk_insert,
    log,
    orders_insert,
    platform_sellers_create,
    seller_connect,
    sellers_create,
)
from bench.threads import orders_put


def _requests(sandbox: Any) -> dict[str, int]:
    counts = sandbox.state()["requests"]["by_endpoint"]
    return {endpoint: sum(statuses.values()) for endpoint, statuses in counts.items()}


def _history_here(seller_id: int, size: int, prefix: str) -> None:
    """``size`` shipped orders with one completed, accepted refund each (and its ledger)."""
    from django.utils import timezone

    from marketplace.orders.models import Order, OrderLine
    from marketplace.returns.models import RefundLedgerEntry, SellerRefund
    from marketplace.returns.payment_keys import refund_payment_key

    order_ids = orders_insert(
        seller_ids=[seller_id], count=size, prefix=prefix, state="SHIPPED", sync_status="synced"
    )
    now = timezone.now()
    refund_ids = bulk_insert(
        SellerRefund,
        (
            {
                "seller_id": seller_id,
                "order_id": order_id,
                "refund_id": f"H{seller_id}-{i}",
                "status": "COMPLETE",
                "notes": "",
                "platform_digest": "",
                "decision": "accepted",
                "decided_at": now,
                "errors": [],
                "created_at": now,
                "updated_at": now,
            }
            for i, order_id in enumerate(order_ids)
        ),
    )
    first_lines = dict(
        OrderLine.objects.filter(order_id__in=order_ids, mp_line_number="1").values_list(
            "order_id", "id"
        )
    )
    numbers = dict(Order.objects.filter(id__in=order_ids).values_list("id", "mp_order_number"))
    bulk_insert(
        RefundLedgerEntry,
        (
            {
                "order_id": order_id,
                "order_line_id": first_lines[order_id],
                "refund_id": refund_id,
                # The key the payments side pays against (unique): as the decision writes it.
                "payment_key": refund_payment_key(
                    mp_order_number=numbers[order_id],
                    refund_id=f"H{seller_id}-{i}",
                    mp_line_number="1",
                ),
                "currency": "EUR",
                "amount": "1.00",
                "detail": {},
                "paid_out_at": now,
                "paid_out_by": "bench",
                "created_at": now,
            }
            for i, (order_id, refund_id) in enumerate(zip(order_ids, refund_ids, strict=True))
        ),
    )


def run(
    env: BenchEnvironment, *, small: int = 100, large: int = 10_000, new: int = 10, rounds: int = 3
) -> dict[str, Any]:
    from unittest import mock

    from marketplace.orders.models import Order
    from marketplace.orders.payloads import order_payload
    from marketplace.returns.services import steps
    from marketplace.returns.services.steps import return_steps_drain
    from marketplace.sync.pull import seller_after_sale_pull

    assert env.sandbox is not None
    sandbox = env.sandbox
    env.flush()
    sandbox.reset(keep_accounts=True)
    sellers = sellers_create(count=2, prefix="p7")
    names = platform_sellers_create(sandbox, sellers)
    connections = [seller_connect(sandbox, s, n) for s, n in zip(sellers, names, strict=True)]
    sizes = [small, large]
    # The steps (complete) are not what is measured: no wake-ups to a broker.
    with mock.patch.object(steps, "steps_wake", return_value=None):
        for seller, name, size in zip(sellers, names, sizes, strict=True):
            sandbox.control(
                "POST",
                "/orders/history",
                {"client_id": CLIENT_ID, "seller": name, "count": size,
                 "prefix": f"P7-{seller.id}-H", "days_ago": 30, "refund_status": "COMPLETE"},
            )  # fmt: skip
            _history_here(seller.id, size, f"P7-{seller.id}")
            first = seller_after_sale_pull(seller_id=seller.id)
            if first.error:
                raise RuntimeError(f"the first pull failed: {first.error}")
        log(f"P7 history in place: {small} and {large} completed refunds")

        measured: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
        paused: dict[int, int] = {}  # seller id -> the refund the last round paused
        for round_no in range(rounds):
            for seller, name, connection in zip(sellers, names, connections, strict=True):
                if seller.id in paused:  # the seller corrects it: CREATED again
                    sandbox.refund_resolve(paused.pop(seller.id), fit=True)
                ids = orders_insert(
                    seller_ids=[seller.id],
                    count=new,
                    prefix=f"P7-NEW{round_no}-{seller.id}",
                    sync_status="synced",
                )
                orders = Order.objects.filter(id__in=ids).prefetch_related("lines")
                token = connection.access_token
                jobs = [(token, o.mp_order_number, order_payload(o)) for o in orders]
                orders_put(sandbox.api_url, jobs, 4, what="placing orders")
                for index, (_, number, _) in enumerate(jobs):
                    sandbox.ship(number, seller=name)
                    # the first of each round is above what the buyer paid: paused
                    over = index == 0
                    posted = sandbox.control(
                        "POST",
                        f"/orders/{number}/refunds",
                        {
                            "seller": name,
                            "refund_lines": [
                                {
                                    "mp_line_number": "1",
                                    "refund_reason": "OTHER",
                                    "refund_quantity": 0,
                                    "currency": "EUR",
                                    "item_refund": "99999.00" if over else "1.00",
                                }
                            ],
                        },
                    )
                    if over:
                        paused[seller.id] = posted["feedamp_refund_id"]
            for seller, size in zip(sellers, sizes, strict=True):
                before = _requests(sandbox)
                started = time.perf_counter()
                result = seller_after_sale_pull(seller_id=seller.id)
                seconds = time.perf_counter() - started
                after = _requests(sandbox)
                made = {
                    k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)
                }
                # the new ones, and the one corrected since the last round
                expected = new + (1 if round_no else 0)
                if result.error or result.decided != expected:
                    raise RuntimeError(f"P7 pull of seller with {size} went wrong: {result}")
                measured[size].append(
                    {
                        "seconds": round(seconds, 4),
                        "requests": made,
                        "listed": result.refunds_listed,
                        "decided": result.decided,
                    }
                )
            # Answer them, as the worker would between pulls: a completed refund, and one
            # paused by our errors, is no longer CREATED and leaves the listing.
            return_steps_drain()
    median = {size: statistics.median(m["seconds"] for m in measured[size]) for size in sizes}
    requests_equal = all(
        a["requests"] == b["requests"]
        for a, b in zip(measured[small], measured[large], strict=True)
    )
    ratio = round(median[large] / median[small], 3)
    return {
        "small": small,
        "large": large,
        "new_per_round": new,
        "rounds": rounds,
        "pulls": {str(size): measured[size] for size in sizes},
        "requests_small": sum(measured[small][-1]["requests"].values()),
        "requests_large": sum(measured[large][-1]["requests"].values()),
        "requests_by_endpoint_small": measured[small][-1]["requests"],
        "requests_by_endpoint_large": measured[large][-1]["requests"],
        "requests_equal": requests_equal,
        "ms_small": round(median[small] * 1000, 1),
        "ms_large": round(median[large] * 1000, 1),
        "time_ratio": ratio,
        "goal_time_ratio": 1.2,
        "goal_met": requests_equal and ratio <= 1.2,
    }
