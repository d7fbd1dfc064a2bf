"""Control API of drift: ``POST /sandbox/api/orders/{n}/drift`` makes a change at the
platform "elsewhere" (``drift``), ``GET /sandbox/api/drift`` lists what was made."""

from django.http import HttpRequest, JsonResponse

from sandbox.common.control import control
from sandbox.common.json_bodies import BadBody, json_object_body
from sandbox.orders_v2.drift import drift_apply, drift_json
from sandbox.records.orders.fulfillment import order_json
from sandbox.records.orders.models import DriftEvent, Order
from sandbox.records.orders.order_lookup import order_find


@control(("POST",))
def order_drift(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request)
    order = order_find(
        mp_order_number=mp_order_number,
        seller=body.get("seller") or request.GET.get("seller"),
        client_id=body.get("client_id") or request.GET.get("client_id"),
    )
    event = drift_apply(order, body)
    # The order as GET /orders/{n} now shows it (null once forgotten).
    after = Order.objects.filter(id=order.id).first()
    return JsonResponse(
        {"drift": drift_json(event), "order": order_json(after) if after else None}, status=201
    )


@control(("GET",))
def drift_events(request: HttpRequest) -> JsonResponse:
    rows = DriftEvent.objects.order_by("-id")
    for key in ("seller", "kind", "mp_order_number"):
        if request.GET.get(key):
            rows = rows.filter(**{key: request.GET[key]})
    try:
        limit = max(1, min(int(request.GET.get("limit", 100)), 1000))
    except ValueError as exc:
        raise BadBody("limit must be an integer") from exc
    return JsonResponse({"drift": [drift_json(e) for e in rows[:limit]]})
