"""P3 — pull: memory of an incremental pull of 10k changed orders vs 1k, and the cost of
a pull with nothing new.

Two sellers hold ``small`` and ``large`` orders, placed at the sandbox with PUTs and then
all shipped by the sandbox's simulated seller (auto-ship), so each seller's next pull
lists, stores and settles every one of its orders. Each of those pulls runs in a
fresh subprocess (``python -m bench.pull child SELLER_ID``) with ``tracemalloc`` started
just before ``seller_pull``: its peak is the pull's own memory. Pages are processed one at
a time, so the peak should not grow with the number of orders: goal ratio <= 1.2.

Then each seller is pulled again with nothing new: the sandbox's request counters must
show exactly one listing request per seller (and no fulfillment reads).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from bench.harness import (
    REPO_DIR,
    BenchEnvironment,
    log,
    orders_insert,
    platform_sellers_create,
    seller_connect,
    sellers_create,
    wait_until,
)
from bench.threads import orders_put


def _endpoint_total(state: dict[str, Any], endpoint: str) -> int:
    return sum(state["requests"]["by_endpoint"].get(endpoint, {}).values())


def _pull_in_child(env: BenchEnvironment, seller_id: int) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.pull", "child", str(seller_id)],
        cwd=REPO_DIR,
        env=env.child_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"pull child failed:\n{completed.stderr[-3000:]}")
    # The child's last line is its result object.
    answer: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return answer


def run(env: BenchEnvironment, *, small: int = 1000, large: int = 10_000) -> dict[str, Any]:
    from marketplace.orders.models import Order
    from marketplace.orders.payloads import order_payload
    from marketplace.sync.pull import seller_pull

    assert env.sandbox is not None
    sandbox = env.sandbox
    env.flush()
    sandbox.reset(keep_accounts=True)
    sellers = sellers_create(count=2, prefix="p3")
    names = platform_sellers_create(sandbox, sellers)
    connections = [
        seller_connect(sandbox, seller, name) for seller, name in zip(sellers, names, strict=True)
    ]
    sizes = {sellers[0].id: small, sellers[1].id: large}
    jobs = []
    for seller, connection in zip(sellers, connections, strict=True):
        orders_insert(
            seller_ids=[seller.id],
            count=sizes[seller.id],
            prefix=f"P3-{seller.id}",
            sync_status="synced",
        )
        token = connection.access_token
        orders = Order.objects.filter(seller=seller).prefetch_related("lines").order_by("id")
        jobs += [(token, o.mp_order_number, order_payload(o)) for o in orders.iterator(2000)]
    log(f"P3 placing {len(jobs)} orders at the sandbox")
    started = time.perf_counter()
    orders_put(sandbox.api_url, jobs, 8, what="placing orders", read_timeout=30)
    log(f"P3 placed in {time.perf_counter() - started:.0f}s; the simulated seller ships them")
    sandbox.set_auto_ship(0)
    wait_until(
        lambda: (
            sandbox.state()["orders"]["by_fulfillment_status"].get("COMPLETE", 0) >= small + large
        ),
        timeout=900,
        interval=1.0,
        what="the sandbox to ship every order",
    )
    sandbox.set_auto_ship(None)

    pulls: dict[str, Any] = {}
    for seller in sellers:
        size = sizes[seller.id]
        log(f"P3 pulling {size} changed orders in a fresh process")
        child = _pull_in_child(env, seller.id)
        if child["error"] or child["changed"] != size:
            raise RuntimeError(f"pull of {size} orders went wrong: {child}")
        pulls[str(size)] = child

    # A pull right after the burst re-lists what changed within PULL_CURSOR_OVERLAP of the
    # cursor (orders cost nothing, pages are listed). The steady state is measured once
    # the overlap window has passed: the cursor is our clock, so the window is shortened
    # here (rather than waiting two minutes) and one more change lands after it.
    from datetime import timedelta

    from django.conf import settings

    def idle_pull(seller_id: int) -> dict[str, Any]:
        before = sandbox.state()
        again = seller_pull(seller_id=seller_id).orders
        after = sandbox.state()
        return {
            "list_requests": _endpoint_total(after, "list_orders")
            - _endpoint_total(before, "list_orders"),
            "fulfillment_reads": _endpoint_total(after, "fulfillments")
            - _endpoint_total(before, "fulfillments"),
            "error": again.error,
        }

    after_burst = {str(sizes[s.id]): idle_pull(s.id) for s in sellers}
    overlap, settings.PULL_CURSOR_OVERLAP = settings.PULL_CURSOR_OVERLAP, timedelta(seconds=1)
    time.sleep(1.5)
    for seller, name, connection in zip(sellers, names, connections, strict=True):
        number = f"P3-LATE-{seller.id}"
        _, _, payload = jobs[0]
        late = (connection.access_token, number, {**payload, "mp_order_number": number})
        orders_put(sandbox.api_url, [late], 1, what="placing orders", read_timeout=30)
        sandbox.ship(number, seller=name)
        seller_pull(seller_id=seller.id)  # catches up (re-lists the burst once more)
    idle = {str(sizes[s.id]): idle_pull(s.id) for s in sellers}
    settings.PULL_CURSOR_OVERLAP = overlap

    small_peak = pulls[str(small)]["peak_bytes"]
    large_peak = pulls[str(large)]["peak_bytes"]
    result: dict[str, Any] = {
        "database": env.vendor,
        "small": small,
        "large": large,
        "pulls": pulls,
        "peak_small_kib": round(small_peak / 1024),
        "peak_large_kib": round(large_peak / 1024),
        "peak_ratio": round(large_peak / small_peak, 3),
        "goal_peak_ratio": 1.2,
        "idle_pull_after_burst": after_burst,
        "idle_pull": idle,
        "after_burst_list_requests_per_seller": max(
            v["list_requests"] for v in after_burst.values()
        ),
        "idle_list_requests_per_seller": max(v["list_requests"] for v in idle.values()),
        "large_orders_per_s": round(large / pulls[str(large)]["seconds"], 1),
    }
    result["goal_met"] = result["peak_ratio"] <= result["goal_peak_ratio"] and all(
        v["list_requests"] == 1 and v["fulfillment_reads"] == 0 for v in idle.values()
    )
    return result


def _child(seller_id: int) -> None:
    import tracemalloc

    import django

    django.setup()
    from marketplace.sync.pull import seller_pull

    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    started = time.perf_counter()
    result = seller_pull(seller_id=seller_id).orders
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "seller_id": seller_id,
                "peak_bytes": peak - base,
                "seconds": round(seconds, 2),
                "pages": result.pages,
                "listed": result.listed,
                "fetched": result.fetched,
                "changed": result.changed,
                "settled": result.settled,
                "error": result.error,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "child":
        _child(int(sys.argv[2]))
    else:
        sys.exit(
            "usage: python -m bench.pull child SELLER_ID (run the benchmark via python -m bench)"
        )
