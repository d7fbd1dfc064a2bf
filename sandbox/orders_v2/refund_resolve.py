"""The seller resolves a paused refund (returns-refunds-contract.md, "errors on a refund"):
new lines, the active errors cleared, back to ``CREATED`` for the marketplace to decide
again from scratch. The reference names no call for it (the seller does it in the
platform's own tools): here it is a service the control API, the v2 order page and the
simulated seller (through the control API) share.

"fit" is how a seller corrects an over-refund: each line is cut down to what the buyer
paid for its order line less what the marketplace already accepted there (completed
refunds and returns), taking from the item refund first, then item tax, shipping, shipping
tax; a quantity above the order line's is cut to it.
"""

from decimal import Decimal
from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.common.body_checks import decimal_of
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.orders_v2.refunds import refund_parse
from sandbox.records.orders.after_sale import changed, line_takes, money_text
from sandbox.records.orders.models import Refund, Return

# What "fit" takes down first (the discount, subtracted, is left as it is).
_CUT_ORDER = ("item_refund", "item_tax_refund", "shipping_refund", "shipping_tax_refund")


def line_paid(placed: dict, mp_line_number: str) -> Decimal:
    """What the buyer paid for a line (the contract's reading: taxes and discounts are line
    totals)."""
    for line in placed.get("order_lines", []):
        if str(line.get("mp_line_number")) == mp_line_number:
            paid = int(line.get("quantity") or 0) * decimal_of(line.get("unit_price"))
            paid += sum((decimal_of(t.get("amount")) for t in line.get("taxes") or []), Decimal(0))
            paid += decimal_of(line.get("shipping_price") or 0)
            paid -= sum(
                (decimal_of(d.get("amount")) for d in line.get("discounts") or []), Decimal(0)
            )
            return paid
    return Decimal(0)


def accepted_by_line(row: Refund) -> dict[str, Decimal]:
    """What the marketplace already accepted per order line, other than this refund."""
    taken: dict[str, Decimal] = {}
    for other in Refund.objects.filter(order_id=row.order_id, status=Refund.COMPLETE).exclude(
        id=row.id
    ):
        for line in other.lines:
            number = line["mp_line_number"]
            taken[number] = taken.get(number, Decimal(0)) + line_takes(line)
    for ret in Return.objects.filter(order_id=row.order_id, status=Return.COMPLETED):
        order_line_of = {
            str(line["mp_return_line_number"]): line["mp_order_line_number"]
            for line in ret.placed["return_lines"]
        }
        for line in ret.refund_lines:
            number = order_line_of.get(str(line["mp_return_line_number"]))
            if number is not None:
                amount = decimal_of(line["principal_refund_amount"])
                amount += decimal_of(line["shipping_refund_amount"])
                taken[number] = taken.get(number, Decimal(0)) + amount
    return taken


def fitted_lines(row: Refund) -> list[dict[str, Any]]:
    """The refund's lines cut down to fit what the buyer paid (see the module's note)."""
    placed = row.order.placed
    quantities = {
        str(line.get("mp_line_number")): int(line.get("quantity") or 0)
        for line in placed.get("order_lines", [])
    }
    taken = accepted_by_line(row)
    fitted = []
    for line in row.lines:
        number = line["mp_line_number"]
        new = dict(line)
        new["refund_quantity"] = min(int(line["refund_quantity"]), quantities.get(number, 0))
        left = line_paid(placed, number) - taken.get(number, Decimal(0))
        excess = line_takes(new) - max(left, Decimal(0))
        for key in _CUT_ORDER:
            if excess <= 0:
                break
            amount = decimal_of(new[key])
            cut = min(amount, excess)
            new[key] = money_text(amount - cut)
            excess -= cut
        taken[number] = taken.get(number, Decimal(0)) + line_takes(new)
        fitted.append(new)
    return fitted


def lines_from_body(order: V2Order, refund_lines: Any) -> list[dict[str, Any]]:
    """New lines given as v2 posts them (``feedamp_order_line_id`` …), validated the same."""
    _, lines = refund_parse(order, {"refund_lines": refund_lines})
    return lines


def refund_resolve(
    row: Refund, *, lines: list[dict[str, Any]] | None, source: str, note: str = ""
) -> Refund:
    """The seller resolves a PAUSED refund: ``lines`` (None: "fit") replace its lines, its
    errors are cleared, and it is CREATED again. 409 unless PAUSED."""
    with transaction.atomic():
        row = Refund.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status != Refund.PAUSED:
            raise PackageError(
                409, f"refund {row.id} is {row.status}: only a PAUSED refund is resolved"
            )
        new_lines = fitted_lines(row) if lines is None else lines
        now = clock.now()
        row.history = [*row.history, {"lines": row.lines, "errors": row.errors}]
        row.lines = new_lines
        row.errors = []
        row.status = Refund.CREATED
        row.resolutions += 1
        fields = ["history", "lines", "errors", "status", "resolutions"]
        changed(row, now, fields=fields, new_state=True)
        v2 = V2Order.objects.filter(order_id=row.order_id).first()
        if v2 is not None:
            how = "fitted to what the buyer paid" if lines is None else "new lines"
            event_add(
                v2, "refund_resolved", f"refund {row.id} resolved: {how}{note} ({source})", now
            )
    return row
