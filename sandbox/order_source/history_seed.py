"""Control API: a seller's order *history*, written in bulk (benchmarks and tests).

``POST /sandbox/api/orders/history`` ``{"client_id", "seller", "count", "prefix",
"days_ago", "refund_status"?}`` creates ``count`` orders the marketplace placed long ago,
every line shipped and the order SHIPPED, last changed by the seller ``days_ago`` days back;
with ``refund_status`` (``CREATED``, ``PAUSED`` or ``COMPLETE``) each order also has one
seller refund of 1.00 on its line in that state, last changed then and already read. Placing
and shipping ten thousand orders through the API takes minutes; a benchmark of what that
history costs a later pull needs it in a second.
"""

from datetime import timedelta

from django.http import HttpRequest, JsonResponse

from sandbox.common import clock
from sandbox.common.control import control
from sandbox.common.json_bodies import error_response, json_object_body
from sandbox.records.orders.models import Client, Order, Refund, Seller

MAX_COUNT = 50_000
BATCH = 2000


def _placed(number: str, when: str) -> dict:
    return {
        "mp_order_number": number,
        "sales_channel": "US",
        "purchase_date": when,
        "currency": "USD",
        "marketplace_state": "SHIPPED",
        "customer": {"full_name": "History Buyer", "email": "history@example.com"},
        "shipping_address": {
            "full_name": "History Buyer",
            "address1": "1 Old Road",
            "city": "Springfield",
            "postal_code": "12345",
            "country_code": "USA",
        },
        "order_lines": [
            {"mp_line_number": "1", "sku": "SKU-H", "quantity": 1, "unit_price": "9.99"}
        ],
    }


def _fulfillment(day: str) -> dict:
    shipment = {
        "quantity": 1,
        "carrier": "UPS",
        "tracking_number": "1Z999AA10123456784",
        "shipped_date": day,
        "tracking_url": "https://www.ups.com/track?tracknum=1Z999AA10123456784",
    }
    return {"lines": {"1": {"shipments": [shipment], "cancellations": []}}}


def _refund_line() -> dict:
    return {
        "refund_line_number": 1,
        "feedamp_order_line_id": "",
        "mp_line_number": "1",
        "refund_reason": "other",
        "refund_quantity": 0,
        "currency": "USD",
        "item_refund": "1.00",
        "item_tax_refund": "0",
        "shipping_refund": "0",
        "shipping_tax_refund": "0",
        "discount_refund": "0",
        "refund_notes": None,
    }


@control(("POST",))
def order_history(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request)
    client = Client.objects.filter(client_id=body.get("client_id")).first()
    seller = Seller.objects.filter(username=body.get("seller")).first()
    count = body.get("count")
    if client is None or seller is None:
        return error_response("not_found", "unknown client_id or seller", 404)
    if not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        return error_response("validation_error", f"count: 1 to {MAX_COUNT}", 400)
    prefix = str(body.get("prefix") or "HIST-")
    days = body.get("days_ago", 30)
    if not isinstance(days, int | float) or days < 0:
        return error_response("validation_error", "days_ago: a number of days >= 0", 400)
    refund_status = body.get("refund_status")
    if refund_status is not None and refund_status not in Refund.STATUSES:
        return error_response(
            "validation_error", f"refund_status: one of {', '.join(Refund.STATUSES)}", 400
        )
    at = clock.now() - timedelta(days=days)
    placed_at, day = at.isoformat(), at.date().isoformat()
    created = 0
    for start in range(0, count, BATCH):
        rows = [
            Order(
                client=client,
                seller=seller,
                mp_order_number=f"{prefix}{i:06d}",
                placed=_placed(f"{prefix}{i:06d}", placed_at),
                marketplace_state="SHIPPED",
                fulfillment=_fulfillment(day),
                fulfillment_status="COMPLETE",
                imported_at=at,
                updated_at=at,
                seller_updated_at=at,
                sort_at=at,
            )
            for i in range(start, min(count, start + BATCH))
        ]
        Order.objects.bulk_create(rows, ignore_conflicts=True)
        created += len(rows)
        if refund_status is not None:
            ids = Order.objects.filter(
                client=client, seller=seller, mp_order_number__in=[r.mp_order_number for r in rows]
            ).values_list("id", flat=True)
            Refund.objects.bulk_create(
                Refund(
                    order_id=order_id,
                    lines=[_refund_line()],
                    status=refund_status,
                    errors=[]
                    if refund_status != Refund.PAUSED
                    else [{"code": "OTHER", "message": "history"}],
                    created_at=at,
                    updated_at=at,
                    read_in_state=True,
                )
                for order_id in ids
            )
    return JsonResponse({"created": created, "seller_updated_at": placed_at})
