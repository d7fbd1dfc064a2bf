"""``python -m bench.soak`` (``make soak``): faults, a killed worker, a broker restart and
expiring tokens, then an order-by-order comparison of the sandbox with the marketplace.

The run (settings: ``bench.soak_settings``, short timeouts, backoffs and leases):

1. Sellers connect (grants minted at the sandbox, stored through the vault); ~10 % of the
   sandbox's answers become faults: 429 with Retry-After, 500, 503, malformed JSON, hangs
   past the client's read timeout, and PUTs whose answer is lost after the write. Each
   seller's own system is the simulated seller process (``python -m sandbox.seller_sim``,
   one process for all sellers, speaking only get_token and the order API v2): the
   platform imports the orders every second, the simulator confirms them, ships them a
   few seconds later (``--ship-delay``, in ``--packages`` packages), cancels some units of
   a few (``--cancel-rate``) and never ships an order the marketplace cancelled.
2. Orders arrive through the intake service over the feed period: most AWAITING_SHIPMENT,
   some PENDING and moved to AWAITING_SHIPMENT later, some cancelled right away, and a few
   deliberately invalid ones (country ``ZZZ``): our intake refuses them (400, ISO codes);
   should one get through, the platform must reject it with 400 instead.
3. One Celery worker pushes and pulls. This process plays beat: it runs the push sweeper,
   the token refresh sweep and the pull fan-out on timers.
4. During the feed: the sandbox expires every access token; our side marks every token as
   due so the refresh sweep rotates them all; the worker is SIGKILLed (with its pool) and
   restarted; the broker restarts (Redis: a private redis-server of this run is shut down
   without saving and started again; the filesystem broker: its messages are deleted).
5. The catalog side (``bench/soak_catalog.py``, issue 24; ``--catalog-sellers``, 0 turns it
   off): a few sellers' platform databases linked and provisioned as staff do, four feed
   runs during the feed (accepted and rejected rows; changes while EDRTS answers 429s and
   503s; a full feed that deactivates a tenth; some of those back), ingested by the same
   worker (queues ``catalog`` and ``edrts``), statuses sent back through EDRTS; this
   process's beat also runs the EDRTS sweep and the feed-run sweep.
6. Drain: wait until every valid order is SHIPPED or CANCELLED and synced (and every feed
   run ingested, every status change sent, EDRTS idle). Then compare,
   order by order: lost (missing at the platform, or the platform's state differs), state
   history duplicated or out of order, shipped quantities that differ, refresh-token
   reuses, failures left (other than the invalid orders), time to drain, and the
   sandbox's violations of the contract by our client; and product by product, the
   sandbox's ``mp_listing_id``/``mp_status``/``mp_reason`` with the status file's
   (``catalog_status_mismatch``).

Returns and refunds run through it too: ``--return-rate`` of the shipped orders get a
buyer's return through intake (the simulator authorizes most, rejects some, refunds the
authorized ones when the parcel "arrives"), and the simulator refunds a line of
``--refund-rate`` of the orders it ships on its own (some above the line's cost). The
drain also waits for every return and refund to be answered; the comparison adds
``returns``, ``refunds``, ``refunds_paid_twice`` (a refund or return with two ledger rows
for one line), ``ledger_mismatch`` (the ledger against the sandbox's record: what it shows
completed is in the ledger for exactly its amounts, nothing else is) and
``returns_unfinished``; the last three are goals (0).

Last, on the frozen sides, a reconciliation pass for every seller (issue 34,
``marketplace/reconcile``; what beat runs daily): ``reconcile_findings`` (by kind, with
examples) and ``reconcile_errors`` are goals (0): after a clean run the pass finds nothing.
The comparisons live in ``bench/soak_compare.py`` (the restore test uses them too).

Exits 1 if a goal is missed. ``--smoke``: 200 orders, 75 s, 2 catalog sellers of 40
products, no worker kill, no broker restart (the CI run shares the machine's Redis with
the test suite; see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.harness import (
    PLATFORM_PASSWORD,
    RESULTS_PATH,
    BenchEnvironment,
    log,
    platform_sellers_create,
    seller_connect,
    sellers_create,
    table,
)
from bench.soak_compare import after_sale_compare, orders_compare, platform_after_sale

INVALID_COUNTRY = "ZZZ"


def fault_rules(rate: float, seed: int = 11) -> list[dict[str, Any]]:
    """The mix, as fractions of every platform call (rules are tried in order)."""
    share = {
        "rate_limit": 0.22,
        "server_error": 0.2,
        "unavailable": 0.2,
        "malformed_json": 0.16,
        "hang": 0.1,
    }
    rules: list[dict[str, Any]] = []
    for n, (kind, part) in enumerate(share.items()):
        rule: dict[str, Any] = {
            "endpoint": "*",
            "kind": kind,
            "probability": round(rate * part, 4),
            "seed": seed + n,
        }
        if kind == "rate_limit":
            rule["retry_after"] = 1
        if kind == "hang":
            rule["hang_seconds"] = 3.0  # > the soak's 2 s read timeout
        rules.append(rule)
    # The write happens, the answer is lost: the push must be repeated, idempotently.
    rules.append(
        {
            "endpoint": "put_order",
            "kind": "server_error",
            "after_view": True,
            "probability": round(rate * 0.12, 4),
            "seed": seed + 99,
        }
    )
    return rules


def _order_body(number: str, seller_username: str, state: str, country: str) -> dict[str, Any]:
    from datetime import UTC, datetime, timedelta

    purchased = datetime.now(UTC) - timedelta(days=1)
    return {
        "mp_order_number": number,
        "seller": seller_username,
        "marketplace_state": state,
        "sales_channel": "EU",
        "purchase_date": purchased.isoformat(),
        "currency": "EUR",
        "customer": {"full_name": "Soak Buyer", "email": "buyer@example.com"},
        "shipping_address": {
            "full_name": "Soak Buyer",
            "address1": "1 Soak Street",
            "city": "Lyon",
            "postal_code": "69001",
            "country_code": country,
        },
        "order_lines": [
            {
                "mp_line_number": "1",
                "sku": "SKU-1",
                "product_name": "Mug",
                "quantity": 2,
                "unit_price": "12.50",
            },
            {
                "mp_line_number": "2",
                "sku": "SKU-2",
                "product_name": "Plate",
                "quantity": 1,
                "unit_price": "8.00",
            },
        ],
    }


class Soak:
    # When beat's jobs are next due (monotonic seconds; run() starts them at 0).
    next_sweep: float
    next_refresh_sweep: float
    next_pull: float
    next_steps: float

    def __init__(self, env: BenchEnvironment, args: argparse.Namespace) -> None:
        self.env = env
        self.args = args
        self.sandbox = env.sandbox
        self.events: list[dict[str, Any]] = []
        self.errors: dict[str, int] = {}
        self.invalid: set[str] = set()
        self.refused_at_intake: set[str] = set()
        self.later: list[tuple[float, str, str]] = []  # (when, number, action)
        self.returners: set[str] = set()  # orders that get a buyer's return once shipped
        self.returned: set[str] = set()

    def note(self, what: str, **detail: Any) -> None:
        log(f"soak: {what} {detail if detail else ''}")
        self.events.append(
            {"at": round(time.monotonic() - self.started, 1), "what": what, **detail}
        )

    def guarded(self, name: str, call: Any) -> Any:
        """Run a beat job or an intake call; a broker outage must not stop the run."""
        try:
            return call()
        except Exception as exc:
            self.errors[name] = self.errors.get(name, 0) + 1
            if self.errors[name] <= 3:
                log(f"soak: {name} raised {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                from django.db import connection

                connection.close()
            return None

    def setup(self) -> None:
        args = self.args
        seller_count = max(args.sellers, math.ceil(args.orders / 800))
        self.sellers = sellers_create(count=seller_count, prefix="soak")
        self.names = platform_sellers_create(self.sandbox, self.sellers)
        for seller, name in zip(self.sellers, self.names, strict=True):
            seller_connect(self.sandbox, seller, name)
        from bench.soak_catalog import CatalogSide

        # The catalog side first: the worker reads the URLs it sets from its environment.
        self.catalog = CatalogSide(
            self, self.sellers[: max(0, args.catalog_sellers)], args.catalog_products
        )
        if self.catalog.sellers:
            self.catalog.setup()
        self.sandbox.set_faults(*fault_rules(args.fault_rate))
        self.simulator = self.seller_simulator()
        self.simulator.start()
        self.worker = self.env.worker(concurrency=args.concurrency, name="soak")
        self.worker.start()
        # One worker for every queue: the catalog's ingestion and EDRTS's sender included.
        banner = self.worker.log_tail(20_000)
        missing = [
            q for q in ("push", "pull", "tokens", "catalog", "edrts") if f".> {q} " not in banner
        ]
        if missing:
            raise RuntimeError(f"the soak's worker does not consume {missing}")

    def seller_simulator(self) -> Any:
        """Every platform seller's own system: an order-API user each, imports every
        second, and one simulator process working through v2 for all of them."""
        from tests.support.seller_sim_process import SellerSimProcess

        sellers = []
        for n, name in enumerate(self.names):
            user = self.sandbox.create_api_user(
                name, f"{name}-erp", PLATFORM_PASSWORD, str(700000 + n)
            )
            self.sandbox.v2_settings(name, import_interval_seconds=1.0)
            sellers.append(
                {
                    "seller": name,
                    "api_user": user["username"],
                    "password": PLATFORM_PASSWORD,
                    "client_id": user["client_id"],
                }
            )
        args = self.args
        # A seller's refusal of a return is a state only under reading B of return_refusal
        # (under A, the reference's, it leaves the return awaiting authorization for ever,
        # shown overdue): the soak takes B so that every return it makes ends somewhere.
        self.sandbox.readings(return_refusal="B")
        return SellerSimProcess(
            self.sandbox,
            sellers=sellers,
            ship_delay=args.ship_delay,
            packages=args.packages,
            cancel_rate=args.cancel_rate,
            seed=args.seed,
            poll_seconds=0.5,
            return_arrival=2,
            return_reject_rate=0.1,
            seller_refund_rate=args.refund_rate,
            over_refund_rate=0.3,
            seller_refund_delay=2,
        )

    # --- the feed ------------------------------------------------------------------

    def create(self, i: int) -> None:
        from marketplace.orders.intake_schema import OrderIn
        from marketplace.orders.services.intake import order_create

        seller = self.sellers[i % len(self.sellers)]
        number = f"SOAK-{i:06d}"
        invalid = i % max(1, self.args.orders // max(1, self.args.invalid)) == 3
        state = "PENDING" if i % 10 == 5 else "AWAITING_SHIPMENT"
        country = INVALID_COUNTRY if invalid else "FRA"
        body = _order_body(number, seller.user.username, state, country)
        if invalid:
            self.invalid.add(number)
        try:
            data = OrderIn.model_validate(body)
        except ValidationError:
            # Our intake refuses it (400): the client gets the answer and does not retry.
            self.refused_at_intake.add(number)
            return
        # A client of the intake API retries a failed create (same body: idempotent).
        while self.guarded("intake", lambda: order_create(data=data)) is None:
            time.sleep(0.2)
        now = time.monotonic()
        if state == "PENDING":
            self.later.append((now + 8, number, "AWAITING_SHIPMENT"))
        elif i % 25 == 7 and not invalid:
            self.later.append((now + 0.5, number, "CANCELLED"))
        elif (
            not invalid
            and self.args.return_rate
            and (i % max(1, round(1 / self.args.return_rate)) == 2)
        ):
            self.returners.add(number)

    def returns_due(self) -> None:
        """A buyer's return for each chosen order once it is shipped (through intake)."""
        from marketplace.orders.errors import IntakeInvalid
        from marketplace.orders.models import Order
        from marketplace.returns.intake_schema import ReturnIn
        from marketplace.returns.services.intake import return_create

        waiting = self.returners - self.returned
        if not waiting:
            return
        shipped = Order.objects.filter(mp_order_number__in=waiting, state="SHIPPED")
        for number in shipped.values_list("mp_order_number", flat=True):
            data = ReturnIn.model_validate(
                {
                    "mp_return_number": f"RET-{number}",
                    "reason": "arrived broken",
                    "return_lines": [{"mp_line_number": "1", "quantity": 1}],
                }
            )
            try:
                made = return_create(mp_order_number=number, data=data)
            except IntakeInvalid:
                # Line 1 was cancelled, not shipped: nothing to return (400 at intake).
                self.returners.discard(number)
                continue
            except Exception as exc:  # a lost connection, a broker outage: next tick
                self.errors["return_create"] = self.errors.get("return_create", 0) + 1
                log(f"soak: return_create raised {type(exc).__name__}: {exc}")
                continue
            if made is not None:
                self.returned.add(number)

    def due_changes(self) -> None:
        from marketplace.orders.services.intake import order_state_change

        now = time.monotonic()
        keep = []
        for when, number, state in self.later:
            if when > now:
                keep.append((when, number, state))
                continue
            changed = self.guarded(
                "state_change",
                lambda n=number, s=state: order_state_change(mp_order_number=n, state=s),
            )
            if changed is None:  # the intake client retries (a deadlock, a lost connection)
                keep.append((now + 1, number, state))
        self.later = keep

    # --- beat ---------------------------------------------------------------------------

    def beat(self, now: float) -> None:
        from marketplace.orders.services.push_recovery import order_sync_sweep
        from marketplace.sync.fan_out import sellers_after_sale_pull_fan_out, sellers_pull_fan_out
        from sellers.services import connection_refresh_sweep

        if now >= self.next_sweep:
            self.guarded("order_sync_sweep", order_sync_sweep)
            self.next_sweep = now + 3
        if now >= self.next_refresh_sweep:
            self.guarded("connection_refresh_sweep", connection_refresh_sweep)
            self.next_refresh_sweep = now + 10
        if now >= self.next_pull:
            self.guarded("sellers_pull_fan_out", sellers_pull_fan_out)
            self.guarded("sellers_after_sale_pull_fan_out", sellers_after_sale_pull_fan_out)
            self.guarded("returns_due", self.returns_due)
            self.next_pull = now + 4
        if self.catalog.sellers:
            self.catalog.beat(now)
        if now >= self.next_steps:
            from marketplace.returns.tasks import return_steps_drain_task

            self.guarded("return_steps_drain", return_steps_drain_task.delay)
            self.next_steps = now + 3

    # --- the incidents ----------------------------------------------------------------------

    def incidents(self, progress: float) -> None:
        args = self.args
        if progress >= 0.3 and "expire" not in self.done:
            self.done.add("expire")
            expired = self.sandbox.expire_tokens()
            self.note("sandbox expired every access token", expired=expired)
        if progress >= 0.45 and "rotate" not in self.done:
            self.done.add("rotate")
            from django.utils import timezone

            from sellers.models import PlatformConnection

            marked = PlatformConnection.objects.update(access_token_expires_at=timezone.now())
            self.note("every stored token marked due: the sweep rotates them", connections=marked)
        if args.kill_worker and progress >= 0.55 and "kill" not in self.done:
            self.done.add("kill")
            self.worker.kill()
            self.note("worker SIGKILLed (main process and pool)")
            time.sleep(1)
            self.worker.start()
            self.note("worker restarted")
        if args.broker_restart and progress >= 0.75 and "broker" not in self.done:
            self.done.add("broker")
            if self.env.redis is not None:
                down = self.env.redis.restart()
                self.note("redis SHUTDOWN NOSAVE and restarted", seconds_down=round(down, 2))
            elif self.env.broker == "filesystem":
                folder = Path(os.environ["CELERY_DATA_DIR"]) / "broker"
                removed = 0
                for message in folder.iterdir():
                    with contextlib.suppress(OSError):
                        message.unlink()
                        removed += 1
                self.note("filesystem broker emptied", messages_deleted=removed)
            else:
                self.note("broker restart skipped: no private redis-server available")

    # --- drain and compare -------------------------------------------------------------------

    def drained(self) -> bool:
        from marketplace.orders.models import Order, OrderSync

        valid = Order.objects.exclude(mp_order_number__in=self.invalid)
        settled = valid.filter(
            state__in=["SHIPPED", "CANCELLED"], sync__status=OrderSync.Status.SYNCED
        )
        accepted_invalid = self.invalid - self.refused_at_intake
        invalid_done = OrderSync.objects.filter(
            order__mp_order_number__in=accepted_invalid, status=OrderSync.Status.FAILED
        ).count()
        orders_done = settled.count() == self.args.orders - len(
            self.invalid
        ) and invalid_done == len(accepted_invalid)
        return orders_done and self.after_sale_done()

    def after_sale_done(self) -> bool:
        """Every chosen return made, and every return and refund at the platform answered
        (a few seconds after the orders, so that the simulator's late refunds exist)."""
        if self.returned != self.returners:
            return False
        if self.feed_done_at is None or time.monotonic() - self.feed_done_at < 6:
            return False
        returns, refunds = self.platform_after_sale()
        open_returns = [
            r
            for r in returns
            if r["status"] not in ("COMPLETED", "REJECTED")
            and not (r["status"] == "REFUNDED" and r.get("errors"))
        ]
        return (
            not open_returns
            and all(r["status"] != "CREATED" for r in refunds)
            and len(returns) == len(self.returners)
        )

    def platform_after_sale(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return platform_after_sale(self.sandbox, self.names)

    def compare_after_sale(self) -> dict[str, Any]:
        """The ledger against the sandbox's record of what was accepted."""
        return after_sale_compare(self.sandbox, self.names)

    def reconcile_all(self) -> dict[str, Any]:
        """A reconciliation pass for every seller (``manage.py reconcile`` does the same),
        over every order of the run, open or closed (after a drain nothing is open, and a
        scheduled pass would compare nothing): what it compared, the platform calls it
        made, and every finding, by kind."""
        from marketplace.reconcile.models import Finding, ReconcileRun, RunTrigger
        from marketplace.reconcile.seller_pass import seller_reconcile

        runs: list[ReconcileRun] = []
        errors: list[str] = []
        for seller in self.sellers:
            try:
                runs.append(
                    seller_reconcile(
                        seller_id=seller.pk,
                        trigger=RunTrigger.COMMAND,
                        actor="soak",
                        scope=self.everything_of(seller.pk),
                    )
                )
            except Exception as exc:
                errors.append(f"seller {seller.pk}: {type(exc).__name__}: {exc}")
        errors += [f"seller {run.seller_id}: {run.error}" for run in runs if run.error]
        findings = Finding.objects.filter(run__in=runs)
        by_kind: dict[str, int] = {}
        for kind in findings.values_list("kind", flat=True):
            by_kind[kind] = by_kind.get(kind, 0) + 1
        compared: dict[str, int] = {}
        for run in runs:
            for what, count in (run.compared or {}).items():
                compared[what] = compared.get(what, 0) + int(count)
        return {
            "reconcile_findings": findings.count(),
            "reconcile_findings_by_kind": by_kind,
            "reconcile_findings_examples": [
                f"{f.kind} {f.object_type} {f.object_key}: {f.note}" for f in findings[:10]
            ],
            "reconcile_compared": compared,
            "reconcile_platform_calls": sum(run.platform_calls for run in runs),
            "reconcile_errors": len(errors),
            "reconcile_errors_examples": errors[:5],
        }

    @staticmethod
    def everything_of(seller_id: int) -> Any:
        """The scope of a pass that compares every order of the seller, its returns and
        its refunds (the run's orders: a few hundred, 50 numbers a listing page)."""
        from marketplace.orders.models import Order
        from marketplace.reconcile.scope import Scope
        from marketplace.returns.models import Return

        orders = sorted(
            Order.objects.filter(seller_id=seller_id).values_list("mp_order_number", flat=True)
        )
        with_returns = sorted(
            set(
                Return.objects.filter(seller_id=seller_id).values_list(
                    "order__mp_order_number", flat=True
                )
            )
        )
        return Scope(
            orders=orders,
            return_orders=with_returns,
            refund_orders=orders,
            open_count=len(orders),
        )

    def compare(self) -> dict[str, Any]:
        return {
            **orders_compare(self.sandbox, self.names, self.invalid),
            "invalid_refused_at_intake": len(self.refused_at_intake),
        }

    def run(self) -> dict[str, Any]:
        args = self.args
        self.started = time.monotonic()
        self.done: set[str] = set()
        self.setup()
        self.note("feeding", orders=args.orders, feed_seconds=args.feed_seconds)
        self.next_sweep = self.next_refresh_sweep = self.next_pull = self.next_steps = 0.0
        self.next_edrts_sweep = self.next_feed_sweep = 0.0
        feed_started = time.monotonic()
        deadline = self.started + args.max_seconds
        created = 0
        last_log = 0.0
        drained_at = None
        while True:
            now = time.monotonic()
            target = min(
                args.orders, math.ceil((now - feed_started) / args.feed_seconds * args.orders)
            )
            # A bounded batch per tick: beat and the incidents must keep their rhythm even
            # when intake falls behind the feed rate.
            batch_end = min(target, created + 25)
            while created < batch_end:
                self.create(created)
                created += 1
            progress = created / args.orders
            self.due_changes()
            if self.catalog.sellers:
                self.catalog.tick(progress)
            self.incidents(progress)
            self.beat(now)
            if now - last_log >= 10:
                last_log = now
                self.log_progress()
            feeding = created < args.orders or self.later
            if not feeding and progress >= 1.0:
                if self.feed_done_at is None:
                    self.feed_done_at = now
                if self.guarded("drained", self.drained) and (
                    not self.catalog.sellers or self.guarded("catalog", self.catalog.settled)
                ):
                    if drained_at is not None:
                        break
                    drained_at = now
                    # The seller's system stops here; what it did in its last moments (a
                    # refund posted after the drain was judged) must be read before both
                    # sides are frozen and reconciled: drained again, then compared.
                    self.simulator.stop()
                    self.note("drained: the simulated seller stopped")
            if now > deadline:
                if drained_at is None:
                    self.note("deadline reached before the drain finished")
                break
            time.sleep(0.25)
        result: dict[str, Any] = {
            "config": {
                "orders": args.orders,
                "sellers": len(self.sellers),
                "concurrency": args.concurrency,
                "fault_rate": args.fault_rate,
                "feed_seconds": args.feed_seconds,
                "max_seconds": args.max_seconds,
                "kill_worker": args.kill_worker,
                "broker_restart": args.broker_restart,
                "broker": "redis" if self.env.broker != "filesystem" else "filesystem",
                "database": self.env.vendor,
                "catalog_sellers": len(self.catalog.sellers),
                "catalog_products": args.catalog_products,
            },
            "drained": drained_at is not None,
            "seconds_to_drain": round(drained_at - self.feed_done_at, 1)
            if drained_at and self.feed_done_at
            else None,
            "seconds_total": round(time.monotonic() - self.started, 1),
            "events": self.events,
            "errors_in_this_process": self.errors,
        }
        # Freeze both sides before comparing: with the worker still pushing and the
        # simulated seller still shipping (a drain that timed out), the two snapshots
        # would be taken at different moments and in-flight orders would look lost.
        self.worker.stop()
        self.simulator.stop()
        self.catalog.stop()
        result["simulator_log_tail"] = self.simulator.log_text()[-1500:].splitlines()
        if os.environ.get("SOAK_WORKER_LOG"):
            Path(os.environ["SOAK_WORKER_LOG"]).write_text(self.worker.log_tail(10_000_000))
        result["worker_log_errors"] = [
            line
            for line in self.worker.log_tail(200_000).splitlines()
            if "ERROR" in line or "WARNING" in line
        ][-15:]
        fired = {f"{f['endpoint']}:{f['kind']}": f["fired"] for f in self.sandbox.faults()}
        self.sandbox.clear_faults()
        result.update(self.compare())
        if self.catalog.sellers:
            result.update(self.catalog.compare())
        result.update(self.compare_after_sale())
        # Last: the reconciliation pass every seller would get from beat, on the frozen
        # sides; after a clean run it finds nothing (issue 34).
        result.update(self.reconcile_all())
        result["faults_fired"] = sum(fired.values())
        result["faults_by_rule"] = fired
        result["goals"] = {
            "lost == 0": result["lost"] == 0,
            "duplicated_or_out_of_order == 0": result["duplicated_or_out_of_order"] == 0,
            "refresh_token_reuse == 0": result["refresh_token_reuse"] == 0,
            "failures_left == 0": result["failures_left"] == 0,
            "invalid orders rejected": result["invalid_not_rejected"] == 0,
            "drained within max_seconds": result["drained"],
            "refunds_paid_twice == 0": result["refunds_paid_twice"] == 0,
            "ledger_mismatch == 0": result["ledger_mismatch"] == 0,
            "returns_unfinished == 0": result["returns_unfinished"] == 0,
            "refused_without_code == 0": result["refused_without_code"] == 0,
            "ledger_over_line_paid == 0": result["ledger_over_line_paid"] == 0,
            "refused_within_cost == 0": result["refused_within_cost"] == 0,
            "reconcile_findings == 0": result["reconcile_findings"] == 0,
            "reconcile_errors == 0": result["reconcile_errors"] == 0,
        }
        if self.catalog.sellers:
            result["goals"]["catalog_status_mismatch == 0"] = result["catalog_status_mismatch"] == 0
        result["goal_met"] = all(result["goals"].values())
        return result

    feed_done_at: float | None = None

    def log_progress(self) -> None:
        from django.db.models import Count

        from marketplace.orders.models import Order, OrderSync

        counts = dict(OrderSync.objects.order_by().values_list("status").annotate(n=Count("id")))
        states = dict(Order.objects.order_by().values_list("state").annotate(n=Count("id")))
        log(f"soak: sync {counts} states {states}")


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    add = parser.add_argument
    add("--smoke", action="store_true", help="200 orders, 75 s, no kill, no broker restart")
    add("--orders", type=int, default=int(env("SOAK_ORDERS", 5000)))
    add("--sellers", type=int, default=int(env("SOAK_SELLERS", 10)))
    add("--invalid", type=int, default=int(env("SOAK_INVALID", 5)))
    add("--concurrency", type=int, default=int(env("SOAK_CONCURRENCY", 4)))
    add("--fault-rate", type=float, default=float(env("SOAK_FAULT_RATE", 0.10)))
    add(
        "--ship-delay",
        "--auto-ship",
        dest="ship_delay",
        type=float,
        default=float(env("SOAK_SHIP_DELAY", env("SOAK_AUTO_SHIP", 3))),
        help="seconds the simulated seller waits before shipping a ready order",
    )
    add("--packages", type=int, default=int(env("SOAK_PACKAGES", 1)), help="per order")
    add("--cancel-rate", type=float, default=float(env("SOAK_CANCEL_RATE", 0.05)))
    add("--return-rate", type=float, default=float(env("SOAK_RETURN_RATE", 0.03)))
    add("--refund-rate", type=float, default=float(env("SOAK_REFUND_RATE", 0.03)))
    add("--seed", type=int, default=int(env("SOAK_SEED", 11)), help="the simulator's seed")
    add("--feed-seconds", type=float, default=float(env("SOAK_FEED_SECONDS", 180)))
    add("--max-seconds", type=float, default=float(env("SOAK_MAX_SECONDS", 600)))
    add(
        "--catalog-sellers",
        type=int,
        default=int(env("SOAK_CATALOG_SELLERS", 3)),
        help="sellers whose catalogs get feed runs (0: no catalog side)",
    )
    add("--catalog-products", type=int, default=int(env("SOAK_CATALOG_PRODUCTS", 200)))
    add("--no-kill", dest="kill_worker", action="store_false")
    add("--no-broker-restart", dest="broker_restart", action="store_false")
    add("--output", type=Path, default=Path(env("SOAK_OUTPUT", RESULTS_PATH)))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.smoke:
        args.orders, args.invalid, args.sellers, args.ship_delay = 200, 3, 4, 1
        args.catalog_sellers, args.catalog_products = 2, 40
        args.return_rate, args.refund_rate = 0.05, 0.05
        args.feed_seconds, args.max_seconds = 10, 75
        args.kill_worker = args.broker_restart = False
    env = BenchEnvironment(
        suffix="soak_smoke" if args.smoke else "soak",
        settings_module="bench.soak_settings",
        private_redis=args.broker_restart,
    ).start()
    log(f"soak: database {env.vendor}, broker {env.broker}, sandbox port {env.sandbox.port}")
    from bench.harness import results_write

    try:
        result = Soak(env, args).run()
    except Exception as exc:
        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {exc}", "goal_met": False}
    finally:
        env.stop()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    results_write(args.output, "soak", result)
    if "error" not in result:
        rows = [("soak figure", "value", "goal")]
        for key, goal in (
            ("orders", ""),
            ("at_platform", ""),
            ("lost", "0"),
            ("duplicated_or_out_of_order", "0"),
            ("refresh_token_reuse", "0"),
            ("failures_left", "0"),
            ("invalid_orders", "rejected with 400"),
            ("invalid_refused_at_intake", ""),
            ("invalid_not_rejected", "0"),
            ("in_flight_at_end", "0"),
            ("violations", "0"),
            ("unsettled", "0"),
            ("shipped_quantity_differs", "0"),
            ("catalog_products", ""),
            ("catalog_status_mismatch", "0"),
            ("returns", ""),
            ("refunds", ""),
            ("refunds_paid_twice", "0"),
            ("ledger_mismatch", "0"),
            ("returns_unfinished", "0"),
            ("refused_without_code", "0"),
            ("ledger_over_line_paid", "0"),
            ("refused_within_cost", "0"),
            ("faults_fired", ""),
            ("seconds_to_drain", f"drained within {args.max_seconds:.0f} s"),
            ("seconds_total", ""),
        ):
            rows.append((key, str(result.get(key)), goal))
        print(table(rows))
        for name, met in result["goals"].items():
            print(f"{'ok  ' if met else 'MISS'} {name}")
    print(f"Results: {args.output}")
    return 0 if result.get("goal_met") else 1


if __name__ == "__main__":
    sys.exit(main())
