"""The v2 order page's hand on a paused refund: correct its lines (or fit them to what the
buyer paid) and resolve it, through the same service as the control API."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST

from sandbox.orders_v2 import refund_resolve
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.orders_v2.page_views import _back, _refused
from sandbox.records.orders.after_sale import REFUND_AMOUNTS
from sandbox.records.orders.models import Refund


def _posted_lines(request: HttpRequest, row: Refund) -> list[dict]:
    """The refund's lines as v2 posts them, with the amounts and units from the form."""
    lines = []
    for line in row.lines:
        number = line["refund_line_number"]
        quantity = request.POST.get(f"refund_quantity-{number}", "").strip()
        lines.append(
            {
                "feedamp_order_line_id": line["feedamp_order_line_id"],
                "refund_reason": line["refund_reason"],
                "refund_quantity": int(quantity) if quantity.isdigit() else quantity,
                "currency": line["currency"],
                **{
                    key: request.POST.get(f"{key}-{number}", "").strip() or "0"
                    for key in REFUND_AMOUNTS
                },
                "refund_notes": line.get("refund_notes"),
            }
        )
    return lines


@require_POST
def refund_resolve_post(request: HttpRequest, order_id: int, refund_id: int) -> HttpResponse:
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    row = get_object_or_404(
        Refund.objects.select_related("order"), id=refund_id, order_id=order.order_id
    )
    try:
        lines = None
        if request.POST.get("how") != "fit":
            lines = refund_resolve.lines_from_body(order, _posted_lines(request, row))
        row = refund_resolve.refund_resolve(row, lines=lines, source="sandbox page")
    except PackageError as exc:
        return _refused(request, order, exc)
    return _back(
        reverse("sandbox_v2_order", args=[order.id]),
        note=f"refund {row.id} resolved: {row.status}",
    )
