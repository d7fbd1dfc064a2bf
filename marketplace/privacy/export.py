"""Everything held about one buyer, as JSON (``manage.py export_buyer``): the right of
access (GDPR Art. 15). Orders matched by e-mail with their lines, shipments, returns,
seller refunds and ledger rows; call log rows that name the buyer's orders; earlier
erasures of the address (matched by its keyed hash)."""

from __future__ import annotations

from typing import Any

from django.db.models import Model

from marketplace.platform.models import PlatformCall
from marketplace.privacy.erasure import buyer_orders, email_hash, email_normalize
from marketplace.privacy.models import BuyerErasure, PendingErasure
from marketplace.returns.amounts import in_unit

_ORDER_FIELDS = (
    "mp_order_number",
    "state",
    "sales_channel",
    "purchase_date",
    "currency",
    "customer_full_name",
    "customer_email",
    "customer_phone",
    "customer_vat",
    "ship_full_name",
    "ship_address1",
    "ship_address2",
    "ship_address3",
    "ship_city",
    "ship_state",
    "ship_postal_code",
    "ship_country_code",
    "ship_phone",
    "delivery_notes",
    "created_at",
)


def _fields(row: Model, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in names}


def buyer_export(*, email: str) -> dict[str, Any]:
    email = email_normalize(email)
    orders = (
        buyer_orders(email=email)
        .select_related("seller")
        .prefetch_related(
            "lines__shipments",
            "returns__lines",
            "seller_refunds__lines",
            "ledger",
        )
        .order_by("id")
    )
    pending = set(
        PendingErasure.objects.filter(order__in=orders).values_list("order_id", flat=True)
    )
    out_orders = []
    numbers = []
    for order in orders:
        numbers.append(order.mp_order_number)
        out_orders.append(
            {
                **_fields(order, _ORDER_FIELDS),
                "seller": str(order.seller),
                "erasure_pending": order.pk in pending,
                "lines": [
                    {
                        **_fields(
                            line,
                            ("mp_line_number", "sku", "product_name", "quantity", "unit_price"),
                        ),
                        "shipments": [
                            _fields(s, ("quantity", "carrier", "tracking_number"))
                            for s in line.shipments.all()
                        ],
                    }
                    for line in order.lines.all()
                ],
                "returns": [
                    {
                        **_fields(
                            r,
                            ("mp_return_number", "status", "reason", "notes", "request_date"),
                        ),
                        "lines": [
                            _fields(rl, ("mp_return_line_number", "quantity"))
                            for rl in r.lines.all()
                        ],
                    }
                    for r in order.returns.all()
                ],
                "seller_refunds": [
                    _fields(r, ("refund_id", "status", "notes", "date_created"))
                    for r in order.seller_refunds.all()
                ],
                "refunds_owed": [
                    _fields(e, ("currency", "paid_out_at", "created_at"))
                    # in the currency's own unit (the column holds 3 places for every one)
                    | {"amount": str(in_unit(e.amount, e.currency))}
                    for e in order.ledger.all()
                ],
            }
        )
    calls = PlatformCall.objects.filter(order_number__in=numbers).order_by("id")
    return {
        "email": email,
        "orders": out_orders,
        "call_log": [
            _fields(c, ("created_at", "method", "path", "status", "order_number"))
            for c in calls.iterator()
        ],
        "erasures": [
            _fields(e, ("created_at", "requested_by", "orders_erased", "orders_pending"))
            for e in BuyerErasure.objects.filter(email_hash=email_hash(email))
        ],
    }
