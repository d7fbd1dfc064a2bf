"""The sandbox's pages for v2: sellers (settings, API users, import), each seller's v2
orders (with the simulated seller's pause switch), and one order with its lines, packages,
cancellations, events and the forms to ship, correct or delete a package or cancel units by
hand (through the same services as the v2 API)."""

from urllib.parse import urlencode

from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sandbox.common import clock
from sandbox.common.carriers import CARRIERS, tracking_number
from sandbox.common.control import ControlError
from sandbox.common.json_bodies import BadBody
from sandbox.orders_v2 import after_sale_by_hand, packages, refunds, returns, sim_settings
from sandbox.orders_v2.control_views import settings_change
from sandbox.orders_v2.dates import rfc3339
from sandbox.orders_v2.imports import seller_import, seller_settings
from sandbox.orders_v2.inspection import inspected_json
from sandbox.orders_v2.models import WORKFLOWS, ApiUser, Package, V2Order
from sandbox.orders_v2.tokens import active_tokens
from sandbox.records.orders.after_sale import REFUND_AMOUNTS, refund_json
from sandbox.records.orders.models import Order, Refund, Return, Seller

SERVICE_STATUSES = ("NEW", "READY", "COMPLETE", "CANCELLED", "")
ORDERS_ON_PAGE = 200
# v2 writes refund reasons in lower case (the reference's ``customer_cancelled``).
REFUND_REASONS = (
    "customer_cancelled",
    "out_of_stock",
    "price_error",
    "shipping_price_error",
    "tax_error",
    "courtesy",
    "other",
)


def _back(url: str, **query: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(url + ("?" + urlencode(query) if query else ""))


def sellers_page(request: HttpRequest) -> HttpResponse:
    rows = []
    for seller in Seller.objects.order_by("username"):
        counts = dict(
            V2Order.objects.filter(seller=seller)
            .values_list("service_status")
            .annotate(n=Count("id"))
            .order_by()
        )
        users = ApiUser.objects.filter(seller=seller).order_by("username")
        rows.append(
            {
                "seller": seller,
                "settings": seller_settings(seller),
                "users": [{"user": u, "active_tokens": active_tokens(u)} for u in users],
                "counts": [
                    (status or "none", counts.get(status, 0)) for status in SERVICE_STATUSES
                ],
                "total": sum(counts.values()),
                "waiting": Order.objects.filter(seller=seller, v2__isnull=True).count(),
            }
        )
    return render(
        request,
        "sandbox_v2/sellers.html",
        {
            "rows": rows,
            "workflows": WORKFLOWS,
            "note": request.GET.get("note"),
            "now": rfc3339(clock.now()),
        },
    )


@require_POST
def seller_settings_post(request: HttpRequest, username: str) -> HttpResponse:
    seller = get_object_or_404(Seller, username=username)
    body: dict[str, object] = {
        "workflow": request.POST.get("workflow"),
        "import_pending": "import_pending" in request.POST,
    }
    try:
        body["import_interval_seconds"] = float(request.POST.get("import_interval_seconds", ""))
        settings_change(seller_settings(seller), body)
    except (ValueError, BadBody) as exc:
        return _back(reverse("sandbox_v2_page"), note=f"{username}: not saved: {exc}")
    return _back(reverse("sandbox_v2_page"), note=f"{username}: settings saved")


@require_POST
def seller_import_post(request: HttpRequest, username: str) -> HttpResponse:
    seller = get_object_or_404(Seller, username=username)
    imported = seller_import(seller)
    return _back(
        reverse("sandbox_v2_seller", args=[username]), note=f"imported {imported} order(s)"
    )


def seller_page(request: HttpRequest, username: str) -> HttpResponse:
    seller = get_object_or_404(Seller, username=username)
    orders = (
        V2Order.objects.filter(seller=seller)
        .select_related("order__client", "seller")
        .prefetch_related("packages", "cancellations", "events")
        .order_by("-id")[:ORDERS_ON_PAGE]
    )
    return render(
        request,
        "sandbox_v2/seller.html",
        {
            "seller": seller,
            "settings": seller_settings(seller),
            "orders": [inspected_json(o) for o in orders],
            "limit": ORDERS_ON_PAGE,
            "note": request.GET.get("note"),
            "simulator": simulator_state(username),
        },
    )


def simulator_state(username: str) -> dict[str, object]:
    """The simulated seller's switch as its process reads it (the control API's
    ``paused`` override) and when the process last read its settings."""
    seen = sim_settings.seconds_since_read(username)
    return {
        "paused": bool(sim_settings.settings_get(username).get("paused")),
        "seen_seconds_ago": None if seen is None else round(seen),
    }


@require_POST
def simulator_post(request: HttpRequest, username: str) -> HttpResponse:
    """Pause or resume the simulated seller (the same switch as
    ``POST /sandbox/api/v2/sellers/{s}/simulator {"paused": …}``)."""
    get_object_or_404(Seller, username=username)
    paused = request.POST.get("paused") == "1"
    sim_settings.settings_update(username, {"paused": paused})
    note = (
        "simulated seller paused: it confirms and ships nothing until resumed"
        if paused
        else "simulated seller working again: it ships what is left of each READY order"
    )
    return _back(reverse("sandbox_v2_seller", args=[username]), note=note)


def _order_context(order: V2Order, **extra: object) -> dict:
    data = inspected_json(order)
    for line in data["lines"]:
        line["left"] = max(
            line.get("ordered", 0) - line.get("shipped", 0) - line.get("cancelled", 0), 0
        )
    return {
        "order": data,
        "seller": order.seller,
        "carriers": CARRIERS,
        "reasons": packages.CANCELLATION_REASONS,
        "shippable": order.order.marketplace_state == "AWAITING_SHIPMENT"
        and any(line["left"] for line in data["lines"]),
        # Packages change only while the order awaits shipment (as through the v2 API).
        "correctable": order.order.marketplace_state == "AWAITING_SHIPMENT",
        **after_sale_context(order),
        **extra,
    }


def order_page(request: HttpRequest, order_id: int) -> HttpResponse:
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    return render(
        request, "sandbox_v2/order.html", _order_context(order, note=request.GET.get("note"))
    )


def order_by_number_page(request: HttpRequest, mp_order_number: str) -> HttpResponse:
    """The seller's order page found by the marketplace's order number: where a
    marketplace's problem card sends the seller to correct a shipment (the marketplace
    knows its own number, not v2's id). The newest order of that number, if imported."""
    order = V2Order.objects.filter(order__mp_order_number=mp_order_number).order_by("-id").first()
    if order is None:
        return HttpResponse(
            f"Order {mp_order_number} has not reached the seller's order system yet: the "
            "platform imports orders on its schedule.",
            status=404,
            content_type="text/plain; charset=utf-8",
        )
    return HttpResponseRedirect(reverse("sandbox_v2_order", args=[order.id]))


def _form_lines(request: HttpRequest, order: V2Order) -> list[dict]:
    lines = []
    for line in order.lines:
        raw = request.POST.get(f"qty-{line['id']}", "").strip() or "0"
        if not raw.isdigit():
            raise packages.PackageError(
                400, f"quantity of line {line['mp_line_number']} must be a whole number"
            )
        if int(raw) > 0:
            lines.append(
                {
                    "line_id": line["id"],
                    "mp_line_number": line["mp_line_number"],
                    "quantity": int(raw),
                }
            )
    if not lines:
        raise packages.PackageError(400, "give a quantity for at least one line")
    return lines


def _refused(request: HttpRequest, order: V2Order, error: packages.PackageError) -> HttpResponse:
    return render(
        request,
        "sandbox_v2/order.html",
        _order_context(order, error=str(error)),
        status=error.status,
    )


@require_POST
def ship_post(request: HttpRequest, order_id: int) -> HttpResponse:
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    carrier = request.POST.get("carrier", "UPS")
    try:
        if carrier not in CARRIERS:
            raise packages.PackageError(400, f"carrier must be one of {', '.join(CARRIERS)}")
        number = request.POST.get("tracking_number", "").strip() or tracking_number(carrier)
        shipment = packages.shipment_parse(
            {"shipped_date": rfc3339(clock.now()), "carrier": carrier, "tracking_number": number}
        )
        package = packages.package_create(
            order, _form_lines(request, order), shipment, source="sandbox page"
        )
    except packages.PackageError as exc:
        return _refused(request, order, exc)
    return _back(
        reverse("sandbox_v2_order", args=[order.id]),
        note=f"package {package.id} shipped ({carrier} {number})",
    )


@require_POST
def cancel_post(request: HttpRequest, order_id: int) -> HttpResponse:
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    try:
        reason = packages.reason_check(request.POST.get("reason"))
        cancellation = packages.cancellation_create(
            order, _form_lines(request, order), reason, source="sandbox page"
        )
    except packages.PackageError as exc:
        return _refused(request, order, exc)
    return _back(
        reverse("sandbox_v2_order", args=[order.id]),
        note=f"cancellation {cancellation.id} recorded",
    )


def _own_package(order_id: int, package_id: int) -> tuple[V2Order, Package]:
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    return order, get_object_or_404(Package, id=package_id, order=order)


@require_POST
def package_correct_post(request: HttpRequest, order_id: int, package_id: int) -> HttpResponse:
    """Correct a package (its units, carrier, tracking number, shipped date): the v2 API's
    ``PUT /orders/{id}/fulfillments/{fid}``, through the same service."""
    order, package = _own_package(order_id, package_id)
    carrier = request.POST.get("carrier", "")
    try:
        if carrier not in CARRIERS:
            raise packages.PackageError(400, f"carrier must be one of {', '.join(CARRIERS)}")
        number = request.POST.get("tracking_number", "").strip() or tracking_number(carrier)
        shipped = request.POST.get("shipped_date", "").strip() or rfc3339(clock.now())
        shipment = packages.shipment_parse(
            {"shipped_date": shipped, "carrier": carrier, "tracking_number": number}
        )
        changed = packages.package_update(
            package, _form_lines(request, order), shipment, source="sandbox page"
        )
    except packages.PackageError as exc:
        return _refused(request, order, exc)
    return _back(
        reverse("sandbox_v2_order", args=[order.id]),
        note=f"package {changed.id} corrected ({carrier} {number})",
    )


@require_POST
def package_delete_post(request: HttpRequest, order_id: int, package_id: int) -> HttpResponse:
    """Delete a package: the v2 API's ``DELETE /orders/{id}/fulfillments/{fid}``."""
    order, package = _own_package(order_id, package_id)
    try:
        packages.package_delete(package, source="sandbox page")
    except packages.PackageError as exc:
        return _refused(request, order, exc)
    return _back(reverse("sandbox_v2_order", args=[order.id]), note=f"package {package_id} deleted")


# -- returns and refunds by hand ----------------------------------------------------------------


def after_sale_context(order: V2Order) -> dict:
    """The order's returns (v2 view, the operations the state allows, what the marketplace
    reported) and its seller refunds (the v1 view: status and errors)."""
    rows = Return.objects.select_related("order").filter(order_id=order.order_id).order_by("id")
    refund_rows = Refund.objects.select_related("order").filter(order_id=order.order_id)
    return {
        "returns": [
            {
                **returns.return_json(row, order),
                # The page's names (v1's) beside v2's.
                "mp_return_number": row.mp_return_number,
                "status": row.status,
                "refund_lines": row.refund_lines,
                "operations": returns.allowed_operations(row),
                "errors": row.errors,
                "read": row.read_in_state,
            }
            for row in rows
        ],
        "refunds": [
            {
                **refund_json(row),
                "read": row.read_in_state,
                "pauses": row.pauses,
                "paused_at": row.paused_at,
                "lines": row.lines,
            }
            for row in refund_rows.order_by("id")
        ],
        "refund_reasons": REFUND_REASONS,
    }


def _return_op_refused(
    request: HttpRequest, order: V2Order, error: str, status: int
) -> HttpResponse:
    return render(
        request, "sandbox_v2/order.html", _order_context(order, error=error), status=status
    )


@require_POST
def return_operation_post(
    request: HttpRequest, order_id: int, return_id: int, op: str
) -> HttpResponse:
    """Authorize (RMA), reject (reason) or refund (amounts per line) a return: the v2 API's
    ``run-operation``, through the same service."""
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    row = get_object_or_404(Return, id=return_id, order_id=order.order_id)
    spec: dict[str, object] = {}
    if op == "authorize":
        spec["rma"] = request.POST.get("rma", "").strip()
    elif op == "reject":
        spec["reason"] = request.POST.get("reason", "").strip()
    elif op == "refund":
        lines = []
        for line in row.placed["return_lines"]:
            number = line["mp_return_line_number"]
            principal = request.POST.get(f"principal-{number}", "").strip()
            shipping = request.POST.get(f"shipping-{number}", "").strip() or "0"
            if principal:
                lines.append(
                    {
                        "mp_return_line_number": number,
                        "principal_refund_amount": principal,
                        "shipping_refund_amount": shipping,
                    }
                )
        spec["lines"] = lines
    try:
        row = after_sale_by_hand.operation_by_hand(row, op, spec, source="sandbox page")
    except packages.PackageError as exc:
        return _return_op_refused(request, order, str(exc), exc.status)
    except ControlError as exc:
        return _return_op_refused(request, order, str(exc), exc.status)
    return _back(
        reverse("sandbox_v2_order", args=[order.id]),
        note=f"return {row.mp_return_number}: {row.status}",
    )


@require_POST
def refund_post(request: HttpRequest, order_id: int) -> HttpResponse:
    """Post a seller refund of one line: the v2 API's ``POST /orders/{id}/refunds``."""
    order = get_object_or_404(
        V2Order.objects.select_related("order__client", "seller"), id=order_id
    )
    quantity = request.POST.get("refund_quantity", "0").strip() or "0"
    if not quantity.isdigit():
        return _return_op_refused(request, order, "the quantity must be a whole number", 400)
    line: dict[str, object] = {
        "feedamp_order_line_id": request.POST.get("line_id", ""),
        "refund_reason": request.POST.get("refund_reason", "") or "other",
        "refund_quantity": int(quantity),
        "currency": order.order.placed.get("currency"),
    }
    for key in REFUND_AMOUNTS:
        line[key] = request.POST.get(key, "").strip() or "0"
    if request.POST.get("refund_notes", "").strip():
        line["refund_notes"] = request.POST["refund_notes"].strip()
    try:
        row = refunds.refund_create(order, {"refund_lines": [line]}, source="sandbox page")
    except packages.PackageError as exc:
        return _return_op_refused(request, order, str(exc), exc.status)
    return _back(reverse("sandbox_v2_order", args=[order.id]), note=f"refund {row.id} posted")
