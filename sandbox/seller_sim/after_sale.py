"""The simulated seller's after-sale desk, through v2 like the rest of it.

Returns: each cycle it reads the returns awaiting authorization and decides each once
(refuses ``return_reject_rate`` of them, authorizes the rest with its own RMA; a return
whose lines are all preauthorized needs no authorization), then refunds the authorized
ones ``return_arrival_seconds`` later (the parcel "arrives") through the return-refund
endpoint (``POST /returns/{id}/refunds``), a full refund of what the buyer asked. A refusal
is the ``reject`` operation under reading B of ``return_refusal``; under A (no such state)
that is refused 409 and the return is simply left unauthorized. What it has to do is read
back from the platform every cycle, so a restart or a person's hand on the page loses
nothing and doubles nothing (an operation the state no longer allows, 409, is dropped).

Seller refunds: ``seller_refund_rate`` of the orders it ships get, ``seller_refund_delay_
seconds`` later, a refund of one shipped unit of one line; ``over_refund_rate`` of those
take more than the line's whole cost (so the marketplace's check pauses them). Refunds the
marketplace paused it sees in its tools (the sandbox's control API: the reference names no
call) and corrects ``paused_refund_fix_rate`` of them, ``paused_refund_fix_seconds`` later,
by fitting them to what the buyer paid; each pause is decided once (a refund paused again
is decided again).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from sandbox.seller_sim.behaviour import Behaviour
from sandbox.seller_sim.client import ApiError, OrderApi

REJECT_REASON = "the item was returned used"
# How often it reads the refunds the marketplace paused (seconds).
PAUSED_READ_SECONDS = 1.0


def _decimal(value: Any) -> Decimal:
    return Decimal(str(value if value is not None else 0))


def line_cost(line: dict[str, Any]) -> Decimal:
    """What the buyer paid for a line (the contract's reading: taxes and discounts are
    line totals)."""
    paid = int(line["quantity"]) * _decimal(line.get("unit_price"))
    paid += sum((_decimal(t.get("amount")) for t in line.get("taxes") or []), Decimal(0))
    paid += _decimal(line.get("shipping_price"))
    paid -= sum((_decimal(d.get("amount")) for d in line.get("discounts") or []), Decimal(0))
    return paid


class Seller(Protocol):
    """What the desk needs of the simulated seller it works for."""

    name: str
    api: OrderApi
    behaviour: Behaviour
    use_control: bool  # whether it may call the sandbox's control API (its own tools)

    def say(self, message: str, *args: Any) -> None: ...


@dataclass
class RefundPlan:
    order: dict[str, Any]
    line_ids: list[str]  # the lines it shipped
    due_at: float
    over: bool


class AfterSaleDesk:
    def __init__(self, seller: Seller, rng: random.Random) -> None:
        self.seller = seller
        self.rng = rng
        self.decided: set[str] = set()  # return ids authorized or rejected by us
        self.arrivals: dict[str, float] = {}  # return id -> when to refund it
        self.refund_plans: dict[str, RefundPlan] = {}  # order id -> plan
        self.seen_pauses: set[tuple[int, int]] = set()  # (refund id, pauses) decided
        self.fixes: dict[int, float] = {}  # refund id -> when to correct it
        self._paused_read_at = 0.0

    def cycle(self) -> None:
        behaviour = self.seller.behaviour
        if behaviour.handle_returns:
            self.returns_cycle()
        if self.seller.use_control:
            self.paused_refunds_cycle()
        now = time.monotonic()
        for order_id, plan in list(self.refund_plans.items()):
            if plan.due_at <= now:
                try:
                    self.seller_refund(order_id, plan)
                except ApiError:
                    plan.due_at = time.monotonic() + 2  # a 429/5xx: again later
                    raise
                del self.refund_plans[order_id]

    # -- returns ----------------------------------------------------------------------------

    def returns_cycle(self) -> None:
        behaviour = self.seller.behaviour
        api = self.seller.api
        now = time.monotonic()
        # One listing a cycle: what waits for a decision and what waits for its parcel.
        rows = api.returns(marketplace_state="AWAITING_AUTHORIZATION,AUTHORIZED")
        for row in rows:
            if row["marketplace_state"] == "AUTHORIZED":
                self.arrivals.setdefault(row["id"], now + behaviour.return_arrival_seconds)
                continue
            if row["id"] in self.decided:
                continue
            if all(line["preauthorized"] for line in row["return_lines"]):
                self.arrivals.setdefault(row["id"], now + behaviour.return_arrival_seconds)
                continue
            if self.rng.random() < behaviour.return_reject_rate:
                self.operation(row, "reject", {"reason": REJECT_REASON})
            else:
                rma = f"RMA-{self.seller.name}-{row['id']}"
                if self.operation(row, "authorize", {"rma": rma}):
                    self.arrivals[row["id"]] = now + behaviour.return_arrival_seconds
            self.decided.add(row["id"])
        for return_id, due in list(self.arrivals.items()):
            if due > now:
                continue
            row = api.call("GET", f"/returns/{return_id}")
            del self.arrivals[return_id]
            lines = [
                {"feedamp_return_line_id": line["id"], "merchant_full_refund": True}
                for line in row["return_lines"]
            ]
            self.return_refund(row, {"merchant_refund_lines": lines})

    def return_refund(self, row: dict[str, Any], body: dict[str, Any]) -> bool:
        try:
            self.seller.api.call("POST", f"/returns/{row['id']}/refunds", json=body)
        except ApiError as exc:
            if exc.status not in (400, 409):
                raise
            self.seller.say("return %s: refund refused: %s", row["id"], exc)
            return False
        self.seller.say(
            "return %s (%s of order %s): refunded as asked",
            row["id"],
            row["marketplace_return_number"],
            row["marketplace_order_number"],
        )
        return True

    def operation(self, row: dict[str, Any], op: str, body: dict[str, Any]) -> bool:
        try:
            self.seller.api.call(
                "POST", f"/returns/{row['id']}/run-operation", params={"op": op}, json=body
            )
        except ApiError as exc:
            if exc.status not in (400, 409):
                raise
            if (
                op == "reject"
                and exc.status == 409
                and row["marketplace_state"] == ("AWAITING_AUTHORIZATION")
            ):
                # Reading A: a refusal has no state; the return is left unauthorized.
                self.seller.say(
                    "return %s (%s of order %s): refused, left unauthorized",
                    row["id"],
                    row["marketplace_return_number"],
                    row["marketplace_order_number"],
                )
                return False
            self.seller.say(
                "return %s (%s): %s refused: %s",
                row["id"],
                row["marketplace_return_number"],
                op,
                exc,
            )
            return False
        self.seller.say(
            "return %s (%s of order %s): %s %s",
            row["id"],
            row["marketplace_return_number"],
            row["marketplace_order_number"],
            {"authorize": "authorized", "reject": "rejected"}[op],
            body.get("rma") or body.get("reason") or "",
        )
        return True

    # -- seller refunds ---------------------------------------------------------------------

    def shipped(self, order: dict[str, Any], line_ids: list[str]) -> None:
        """An order we just shipped: maybe refund one of its lines later."""
        behaviour = self.seller.behaviour
        if not line_ids or self.rng.random() >= behaviour.seller_refund_rate:
            return
        self.refund_plans[order["id"]] = RefundPlan(
            order=order,
            line_ids=line_ids,
            due_at=time.monotonic() + behaviour.seller_refund_delay_seconds,
            over=self.rng.random() < behaviour.over_refund_rate,
        )

    def seller_refund(self, order_id: str, plan: RefundPlan) -> None:
        lines = {line["id"]: line for line in plan.order["order_lines"]}
        line = lines[self.rng.choice(sorted(plan.line_ids))]
        unit = _decimal(line.get("unit_price"))
        if plan.over:
            item, reason, note = line_cost(line) + Decimal("10.00"), "price_error", "price error"
        else:
            item, reason, note = (unit / 2).quantize(Decimal("0.01")), "other", "courtesy refund"
        body = {
            "cp_refund_number": f"{self.seller.name}-R{order_id}",
            "refund_lines": [
                {
                    "feedamp_order_line_id": line["id"],
                    "refund_reason": reason,
                    "refund_quantity": 0 if not plan.over else 1,
                    "currency": plan.order.get("currency") or "EUR",
                    "item_refund": str(item),
                    "item_tax_refund": "0",
                    "shipping_refund": "0",
                    "shipping_tax_refund": "0",
                    "discount_refund": "0",
                    "refund_notes": note,
                }
            ],
        }
        try:
            self.seller.api.call("POST", f"/orders/{order_id}/refunds", json=body)
        except ApiError as exc:
            if exc.status != 400:
                raise
            self.seller.say("order %s: refund refused: %s", order_id, exc)
            return
        self.seller.say(
            "order %s (%s): refunded %s on line %s (%s%s)",
            order_id,
            plan.order["marketplace_order_number"],
            item,
            line["marketplace_line_number"],
            note,
            ", over the line's cost" if plan.over else "",
        )

    # -- paused refunds ---------------------------------------------------------------------

    def paused_refunds_cycle(self) -> None:
        """Decide each new pause once; correct the chosen ones when due."""
        behaviour = self.seller.behaviour
        now = time.monotonic()
        if now - self._paused_read_at >= PAUSED_READ_SECONDS:
            self._paused_read_at = now
            rows = self.seller.api.control(
                "GET",
                "/refunds",
                params={"seller": self.seller.name, "status": "PAUSED", "limit": "1000"},
            )["refunds"]
            for row in rows:
                key = (int(row["feedamp_refund_id"]), int(row["pauses"]))
                if key in self.seen_pauses:
                    continue
                self.seen_pauses.add(key)
                if self.rng.random() < behaviour.paused_refund_fix_rate:
                    self.fixes[key[0]] = now + behaviour.paused_refund_fix_seconds
                else:
                    self.seller.say("refund %s: paused, left as it is", key[0])
        for refund_id, due in list(self.fixes.items()):
            if due > now:
                continue
            del self.fixes[refund_id]
            try:
                self.seller.api.control("POST", f"/refunds/{refund_id}/resolve", json={"fit": True})
            except ApiError as exc:
                if exc.status not in (404, 409):
                    raise
                self.seller.say("refund %s: not corrected: %s", refund_id, exc)
                continue
            self.seller.say("refund %s: corrected to fit what the buyer paid", refund_id)
