"""Finding an order for the control API, where the number alone may be ambiguous."""

from sandbox.common.control import ControlError
from sandbox.records.orders.models import Order


class OrderLookupError(ControlError):
    def __init__(self, error: str, message: str, status: int, matches: list | None = None) -> None:
        super().__init__(error, message, status, matches=matches or [])
        self.matches = matches or []


def order_find(
    *, mp_order_number: str, seller: str | None = None, client_id: str | None = None
) -> Order:
    rows = Order.objects.select_related("client", "seller").filter(mp_order_number=mp_order_number)
    if seller:
        rows = rows.filter(seller__username=seller)
    if client_id:
        rows = rows.filter(client__client_id=client_id)
    found = list(rows[:10])
    if not found:
        raise OrderLookupError("not_found", f"no order {mp_order_number!r}", 404)
    if len(found) > 1:
        raise OrderLookupError(
            "ambiguous",
            "several orders have this number: pass seller and/or client_id",
            409,
            [{"seller": o.seller.username, "client_id": o.client.client_id} for o in found],
        )
    return found[0]
