"""Inspection of the simulator (JSON under /sandbox/api, HTML at /sandbox/).

``/sandbox/api/state`` is cheap (counters and aggregates) because benchmarks poll it;
orders, errors and grants in detail have their own bounded endpoints.
"""

from django.db.models import Count, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from sandbox.common import clock, faults, request_log, switches, violations
from sandbox.common.json_bodies import error_response
from sandbox.order_source import grants
from sandbox.records.orders.after_sale import inspected_refund_json, inspected_return_json
from sandbox.records.orders.fulfillment import fulfillments_json
from sandbox.records.orders.models import (
    DriftEvent,
    ErrorReport,
    Grant,
    Order,
    Refund,
    Return,
)
from sandbox.records.orders.order_lookup import OrderLookupError, order_find

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def _limit(request: HttpRequest, default: int = DEFAULT_LIMIT) -> int:
    try:
        return max(1, min(int(request.GET.get("limit", default)), MAX_LIMIT))
    except ValueError:
        return default


def _token_counters() -> dict:
    counters = dict(grants.counters)
    return {
        "token_requests": {
            k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("token_request:")
        },
        "tokens_issued": {
            k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("token_issued:")
        },
        "refresh_token_reuse": counters.get("refresh_reuse", 0),
        "code_reuse": counters.get("code_reuse", 0),
        # Reading B of refresh_reuse: a spent refresh token exchanged again (a lost answer).
        "refresh_regrant": counters.get("refresh_regrant", 0),
    }


def grant_json(grant: Grant) -> dict:
    return {
        "id": grant.id,
        "client_id": grant.client.client_id,
        "seller": grant.seller.username,
        "created_at": grant.created_at.isoformat(),
        "revoked": grant.revoked_at is not None,
        "revoked_at": grant.revoked_at.isoformat() if grant.revoked_at else None,
        "revoked_reason": grant.revoked_reason,
        "refresh_count": grant.refresh_count,
        "reuse_count": grant.reuse_count,
    }


def _grants(limit: int) -> list[dict]:
    rows = Grant.objects.select_related("client", "seller").order_by("-id")[:limit]
    return [grant_json(g) for g in rows]


def state_json(*, grants_limit: int = 50) -> dict:
    by_state = dict(
        Order.objects.values_list("marketplace_state").annotate(n=Count("id")).order_by()
    )
    by_fulfillment = dict(
        Order.objects.values_list("fulfillment_status").annotate(n=Count("id")).order_by()
    )
    grant_totals = Grant.objects.aggregate(
        total=Count("id"), reuse=Sum("reuse_count"), refreshes=Sum("refresh_count")
    )
    return {
        "now": clock.now().isoformat(),
        "clock_offset_seconds": clock.offset_seconds(),
        **switches.snapshot(),
        "counters": _token_counters(),
        "requests": request_log.counts(),
        "faults": faults.rules(),
        "violations": violations.summary(limit=20),
        "orders": {
            "total": sum(by_state.values()),
            "by_marketplace_state": by_state,
            "by_fulfillment_status": by_fulfillment,
            "with_errors": Order.objects.filter(has_errors=True).count(),
        },
        "errors_received": ErrorReport.objects.count(),
        # Returns and seller refunds by status (a soak compares COMPLETED with its ledger).
        "returns": dict(Return.objects.values_list("status").annotate(n=Count("id")).order_by()),
        "refunds": dict(Refund.objects.values_list("status").annotate(n=Count("id")).order_by()),
        # Changes made at the platform elsewhere (``POST /sandbox/api/orders/{n}/drift``).
        "drift": dict(DriftEvent.objects.values_list("kind").annotate(n=Count("id")).order_by()),
        "grants_total": grant_totals["total"],
        "refresh_reuse_by_grants": grant_totals["reuse"] or 0,
        "grants": _grants(grants_limit),
    }


def state(request: HttpRequest) -> JsonResponse:
    return JsonResponse(state_json())


def inspected_order_json(order: Order) -> dict:
    return {
        "mp_order_number": order.mp_order_number,
        "client_id": order.client.client_id,
        "seller": order.seller.username,
        "marketplace_state": order.marketplace_state,
        "fulfillment_status": order.fulfillment_status,
        "acknowledged": order.acknowledged,
        "has_errors": order.has_errors,
        "imported_at": order.imported_at.isoformat(),
        "updated_at": order.updated_at.isoformat(),
        "seller_updated_at": order.seller_updated_at.isoformat()
        if order.seller_updated_at
        else None,
        "placed": order.placed,
        "fulfillments": fulfillments_json(order),
        "state_history": [
            {"state": h.state, "at": h.at.isoformat(), "request_id": h.request_id}
            for h in order.history.all()
        ],
        "errors": [error_json(e) for e in order.errors.all()],
        "returns": [inspected_return_json(r) for r in order.returns.order_by("id")],
        "refunds": [inspected_refund_json(r) for r in order.refunds.order_by("id")],
    }


def error_json(error: ErrorReport) -> dict:
    return {
        "code": error.code,
        "message": error.message,
        "mp_line_number": error.mp_line_number or None,
        "debug": error.debug,
        "received_at": error.received_at.isoformat(),
        "request_id": error.request_id,
    }


def orders(request: HttpRequest) -> JsonResponse:
    rows = Order.objects.select_related("client", "seller").prefetch_related("history", "errors")
    if request.GET.get("seller"):
        rows = rows.filter(seller__username=request.GET["seller"])
    rows = rows.order_by("-id")[: _limit(request)]
    return JsonResponse({"orders": [inspected_order_json(o) for o in rows]})


def order(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    try:
        found = order_find(
            mp_order_number=mp_order_number,
            seller=request.GET.get("seller"),
            client_id=request.GET.get("client_id"),
        )
    except OrderLookupError as exc:
        return error_response(exc.error, str(exc), exc.status, matches=exc.matches)
    return JsonResponse(inspected_order_json(found))


def errors(request: HttpRequest) -> JsonResponse:
    rows = ErrorReport.objects.select_related("order").order_by("-id")[: _limit(request)]
    return JsonResponse(
        {"errors": [{"mp_order_number": e.order.mp_order_number, **error_json(e)} for e in rows]}
    )


def violations_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse(violations.summary(limit=_limit(request)))


def grants_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"grants": _grants(_limit(request))})


def requests_log(request: HttpRequest) -> JsonResponse:
    try:
        since = int(request.GET.get("since_seq", 0))
    except ValueError:
        since = 0
    entries = request_log.entries(
        since_seq=since,
        limit=_limit(request, 200),
        endpoint=request.GET.get("endpoint"),
        path=request.GET.get("path"),
    )
    return JsonResponse({"requests": entries, **request_log.counts()})


def state_page(request: HttpRequest) -> HttpResponse:
    recent = Order.objects.select_related("client", "seller").prefetch_related("history", "errors")
    context = {
        "state": state_json(grants_limit=50),
        "orders": [inspected_order_json(o) for o in recent.order_by("-id")[:50]],
        "requests": list(reversed(request_log.entries(limit=50))),
        "returns": [
            inspected_return_json(r)
            for r in Return.objects.select_related("order__client", "order__seller").order_by(
                "-updated_at", "-id"
            )[:50]
        ],
        "refunds": [
            inspected_refund_json(r)
            for r in Refund.objects.select_related("order__client", "order__seller").order_by(
                "-updated_at", "-id"
            )[:50]
        ],
    }
    return render(request, "sandbox/state.html", context)
