"""P5 — an incremental pull against history: 10 new shipments, with 100 vs 10 000
settled orders behind them.

Two sellers, each pulled once while empty (so a completed pull set their cursor), then
given a history of ``small`` and ``large`` orders shipped and settled a month ago, on both
sides (the sandbox's bulk history call and a bulk insert here). Each round places ``new``
orders per seller at the sandbox, ships them, and times one pull of each seller, counting
the requests the sandbox saw. The platform's order shape carries no update time, so a pull
that leaned on one would re-list the whole history; ours lists what changed since its
last completed pull. Goals: the same requests for both sellers, time <= 1.2x.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.harness import (
    CLIENT_ID,
    BenchEnvironment,
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


def run(
    env: BenchEnvironment, *, small: int = 100, large: int = 10_000, new: int = 10, rounds: int = 3
) -> dict[str, Any]:
    from marketplace.orders.models import Order
    from marketplace.orders.payloads import order_payload
    from marketplace.sync.pull import seller_pull

    assert env.sandbox is not None
    sandbox = env.sandbox
    env.flush()
    sandbox.reset(keep_accounts=True)
    sellers = sellers_create(count=2, prefix="p5")
    names = platform_sellers_create(sandbox, sellers)
    connections = [seller_connect(sandbox, s, n) for s, n in zip(sellers, names, strict=True)]
    sizes = [small, large]
    for seller, name, size in zip(sellers, names, sizes, strict=True):
        first = seller_pull(seller_id=seller.id).orders
        if not first.completed:
            raise RuntimeError(f"the first pull did not complete: {first.error}")
        sandbox.control(
            "POST",
            "/orders/history",
            {"client_id": CLIENT_ID, "seller": name, "count": size,
             "prefix": f"P5-{seller.id}-0", "days_ago": 30},
        )  # fmt: skip
        orders_insert(
            seller_ids=[seller.id],
            count=size,
            prefix=f"P5-{seller.id}",
            state="SHIPPED",
            sync_status="synced",
        )
    log(f"P5 history in place: {small} and {large} settled orders")

    measured: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
    for round_no in range(rounds):
        for seller, name, connection in zip(sellers, names, connections, strict=True):
            ids = orders_insert(
                seller_ids=[seller.id], count=new, prefix=f"P5-NEW{round_no}-{seller.id}"
            )
            orders = Order.objects.filter(id__in=ids).prefetch_related("lines")
            token = connection.access_token
            jobs = [(token, o.mp_order_number, order_payload(o)) for o in orders]
            orders_put(sandbox.api_url, jobs, 4, what="placing orders")
            for _, number, _ in jobs:
                sandbox.ship(number, seller=name)
        for seller, size in zip(sellers, sizes, strict=True):
            before = _requests(sandbox)
            started = time.perf_counter()
            result = seller_pull(seller_id=seller.id).orders
            seconds = time.perf_counter() - started
            after = _requests(sandbox)
            made = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
            if result.error or result.settled != new:
                raise RuntimeError(f"P5 pull of seller with {size} went wrong: {result}")
            measured[size].append(
                {"seconds": round(seconds, 4), "requests": made, "listed": result.listed}
            )
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
        "requests_small": measured[small][-1]["requests"],
        "requests_large": measured[large][-1]["requests"],
        "requests_equal": requests_equal,
        "ms_small": round(median[small] * 1000, 1),
        "ms_large": round(median[large] * 1000, 1),
        "time_ratio": ratio,
        "goal_time_ratio": 1.2,
        "goal_met": requests_equal and ratio <= 1.2,
    }
