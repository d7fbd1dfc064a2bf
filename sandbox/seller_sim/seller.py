"""One simulated seller's order system, polling the v2 API as the contract recommends.

Each cycle: confirm the NEW orders (with the seller's own order number), take the READY
ones into the shipping queue (shipped ``ship_delay_seconds`` later), then read the state
changes since the stored timestamp: an order the marketplace cancelled leaves the queue
and is never shipped. Shipping first reads what the order already has (packages and
cancellations) and ships only what is left of each line, so a step cut short by an error
is finished, never doubled, and units a person shipped or cancelled by hand (the
sandbox's pages) are left alone: the simulator and a person never fight over an order.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sandbox.common.carriers import (
    CARRIERS,
    UNKNOWN_CARRIER,
    bad_tracking_number,
    tracking_number,
)
from sandbox.seller_sim.after_sale import AfterSaleDesk
from sandbox.seller_sim.behaviour import BAD_KINDS, Behaviour
from sandbox.seller_sim.client import ApiError, OrderApi

log = logging.getLogger("seller_sim")
# Re-read state changes this far back: the stored timestamp is our clock, not the platform's.
CHANGES_OVERLAP = timedelta(seconds=5)
OVERRIDES_EVERY = 2.0
# A shipment refused (400) this many times in a row is given up (a refusal is re-read and
# retried first: a person shipping by hand at the same moment is no reason to give up).
REFUSED_ATTEMPTS = 5


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


@dataclass
class Plan:
    """What the seller will do with one order, decided once (repeatable with the seed)."""

    order: dict[str, Any]
    due_at: float
    packages: int
    carrier: str
    cancel: dict[str, int] = field(default_factory=dict)  # line id -> units to cancel
    bad: str | None = None
    attempts: int = 0


class SimulatedSeller:
    def __init__(
        self,
        name: str,
        api: OrderApi,
        behaviour: Behaviour,
        *,
        seed: int = 1,
        poll_seconds: float = 1.0,
        use_control: bool = True,
    ) -> None:
        self.name = name
        self.api = api
        self.base_behaviour = behaviour
        self.behaviour = behaviour
        self.rng = random.Random(f"{seed}:{name}")
        self.poll_seconds = poll_seconds
        self.use_control = use_control
        self.plans: dict[str, Plan] = {}
        self.finished: set[str] = set()
        self.confirmed: set[str] = set()
        self.changes_since = datetime.now(UTC) - CHANGES_OVERLAP
        self._overrides_at = 0.0
        # Its own random stream: returns and refunds never change the shipping decisions.
        self.desk = AfterSaleDesk(self, random.Random(f"{seed}:{name}:after-sale"))

    def say(self, message: str, *args: Any) -> None:
        log.info("%s: " + message, self.name, *args)

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        self.say("started (%s)", self.behaviour)
        while not stop.is_set():
            try:
                self.cycle()
            except ApiError as exc:
                self.say("a call failed: %s; trying again next cycle", exc)
            except Exception:
                log.exception("%s: cycle failed", self.name)
            stop.wait(self.poll_seconds)
        self.say("stopped")

    def _refresh_behaviour(self) -> None:
        if not self.use_control or time.monotonic() - self._overrides_at < OVERRIDES_EVERY:
            return
        self._overrides_at = time.monotonic()
        behaviour = self.base_behaviour.with_overrides(self.api.behaviour_overrides(self.name))
        if behaviour != self.behaviour:
            self.say("behaviour now %s", behaviour)
            self.behaviour = behaviour

    def cycle(self) -> None:
        self._refresh_behaviour()
        if self.behaviour.paused:
            return
        started = datetime.now(UTC)
        for order in self.api.orders(service_status="NEW"):
            self.confirm(order)
        for order in self.api.orders(service_status="READY"):
            if order["id"] not in self.plans and order["id"] not in self.finished:
                self.plan(order)
        changed = self.api.orders(marketplace_state_changed_after=rfc3339(self.changes_since))
        for order in changed:
            self.state_changed(order)
        self.changes_since = started - CHANGES_OVERLAP
        now = time.monotonic()
        for order_id, plan in list(self.plans.items()):
            if plan.due_at <= now:
                self.ship(order_id, plan)
        self.desk.cycle()

    # -- steps ------------------------------------------------------------------------------

    def confirm(self, order: dict[str, Any]) -> None:
        order_id = order["id"]
        if order_id in self.confirmed:
            return
        number = f"{self.name}-{order_id}"
        try:
            self.api.call(
                "POST", f"/orders/{order_id}/confirm", json={"merchant_order_number": number}
            )
            self.say(
                "confirmed order %s (%s) as %s", order_id, order["marketplace_order_number"], number
            )
        except ApiError as exc:
            if exc.status != 409:
                raise
        self.confirmed.add(order_id)

    def plan(self, order: dict[str, Any]) -> None:
        behaviour = self.behaviour
        lines = {line["id"]: line["quantity"] for line in order["order_lines"]}
        units = sum(lines.values())
        plan = Plan(
            order=order,
            due_at=time.monotonic() + behaviour.ship_delay_seconds,
            packages=behaviour.packages,
            carrier=self.rng.choice(CARRIERS),
        )
        if units > 1 and self.rng.random() < behaviour.cancel_rate:
            line_id = self.rng.choice(sorted(lines))
            plan.cancel = {line_id: self.rng.randint(1, min(lines[line_id], units - 1))}
        if self.rng.random() < behaviour.bad_rate:
            plan.bad = self.rng.choice(BAD_KINDS)
        self.plans[order["id"]] = plan
        self.say(
            "order %s (%s) ready: %d package(s) in %.1f s%s%s",
            order["id"],
            order["marketplace_order_number"],
            plan.packages,
            behaviour.ship_delay_seconds,
            f", cancelling {plan.cancel}" if plan.cancel else "",
            f", with bad data ({plan.bad})" if plan.bad else "",
        )

    def state_changed(self, order: dict[str, Any]) -> None:
        if order["normalized_marketplace_state"] != "CANCELLED":
            return
        order_id = order["id"]
        if order_id in self.plans:
            del self.plans[order_id]
            self.finished.add(order_id)
            self.say(
                "order %s (%s) cancelled by the marketplace: not shipping it",
                order_id,
                order["marketplace_order_number"],
            )

    def _shipment(self, carrier: str, bad: str | None) -> dict[str, str]:
        shipped = datetime.now(UTC)
        number = tracking_number(carrier, self.rng.choice)
        if bad == "unknown_carrier":
            carrier = UNKNOWN_CARRIER
        elif bad == "bad_tracking_number":
            number = bad_tracking_number(carrier)
        elif bad == "future_shipped_date":
            shipped += timedelta(days=7)
        return {"shipped_date": rfc3339(shipped), "carrier": carrier, "tracking_number": number}

    def _left(self, order_id: str, plan: Plan) -> tuple[dict[str, int], int, int]:
        """What is left of each line (ordered - shipped - cancelled), read from v2 now:
        a person may have shipped or cancelled some by hand (or an earlier try of ours was
        cut short). Also returns how many packages and cancellations the order has."""
        path = f"/orders/{order_id}"
        packages = self.api.call("GET", f"{path}/fulfillments")["fulfillments"]
        cancellations = self.api.call("GET", f"{path}/cancellations")["cancellations"]
        left = {line["id"]: line["quantity"] for line in plan.order["order_lines"]}
        for record, key in [(p, "fulfillment_lines") for p in packages] + [
            (c, "cancellation_lines") for c in cancellations
        ]:
            for line in record[key]:
                if line["line_id"] in left:
                    left[line["line_id"]] -= line["quantity"]
        return {k: max(v, 0) for k, v in left.items()}, len(packages), len(cancellations)

    def ship(self, order_id: str, plan: Plan) -> None:
        """Cancel the planned units, then ship what is left in the planned packages.

        What is left is read from v2 first, so units someone shipped or cancelled by hand
        (or an earlier try of ours) are never shipped again; planned cancellations are
        made only on an order nobody has touched yet."""
        plan.attempts += 1
        try:
            left, packages, cancellations = self._left(order_id, plan)
            if plan.cancel and not packages and not cancellations:
                cuts = {k: min(v, left.get(k, 0)) for k, v in plan.cancel.items()}
                cuts = {k: n for k, n in cuts.items() if n > 0}
                lines = [{"line_id": k, "quantity": n} for k, n in cuts.items()]
                if lines:
                    self.api.call(
                        "POST",
                        f"/orders/{order_id}/cancellations",
                        json={"cancellation_lines": lines, "reason": "out_of_stock"},
                    )
                    self.say(
                        "order %s: cancelled %s (out_of_stock)",
                        order_id,
                        cuts,
                    )
                    for line_id, n in cuts.items():
                        left[line_id] -= n
            units = [line_id for line_id, count in left.items() for _ in range(count)]
            if not units:
                self.say(
                    "order %s (%s): nothing left to ship (%d package(s) and %d cancellation(s) "
                    "already made)",
                    order_id,
                    plan.order["marketplace_order_number"],
                    packages,
                    cancellations,
                )
            if units and packages:
                self.say(
                    "order %s (%s): %d package(s) already made, shipping the %d unit(s) left",
                    order_id,
                    plan.order["marketplace_order_number"],
                    packages,
                    len(units),
                )
            count = max(1, min(plan.packages - packages, len(units))) if units else 0
            for index in range(count):
                chunk = units[index * len(units) // count : (index + 1) * len(units) // count]
                if not chunk:
                    continue
                lines = [{"line_id": k, "quantity": chunk.count(k)} for k in dict.fromkeys(chunk)]
                bad = plan.bad if not packages and index == 0 else None
                shipment = self._shipment(plan.carrier, bad)
                body = {
                    "fulfillment_type": "shipment",
                    "fulfillment_lines": lines,
                    "shipment": shipment,
                }
                made = self.api.call("POST", f"/orders/{order_id}/fulfillments", json=body)
                self.say(
                    "order %s: shipped package %s (%d of %d): %s via %s %s%s",
                    order_id,
                    made["id"],
                    index + 1,
                    count,
                    ", ".join(f"{line['quantity']} x line {line['line_id']}" for line in lines),
                    shipment["carrier"],
                    shipment["tracking_number"],
                    f" [bad: {bad}]" if bad else "",
                )
            if units:
                self.desk.shipped(plan.order, sorted(set(units)))
        except ApiError as exc:
            if exc.status == 409:
                self.say("order %s: not shipped, the platform says: %s", order_id, exc)
            elif exc.status == 400 and plan.attempts < REFUSED_ATTEMPTS:
                # Most likely someone shipped or cancelled by hand between our reading and
                # our call: read again and ship what is left then.
                self.say("order %s: refused (%s); reading it again in 2 s", order_id, exc)
                plan.due_at = time.monotonic() + 2
                return
            elif exc.status == 400:
                self.say(
                    "order %s: refused %d times (%s); giving up on it", order_id, plan.attempts, exc
                )
            else:
                plan.due_at = time.monotonic() + 2
                raise
        del self.plans[order_id]
        self.finished.add(order_id)
