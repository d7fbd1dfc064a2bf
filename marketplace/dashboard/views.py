"""The staff dashboard: overview, sellers, orders, and the repair actions.

Views stay thin: reads come from ``marketplace.dashboard.selectors``, actions from
``marketplace.dashboard.services``. Each ``*_live`` view returns the HTML fragment that
``static/js/live.js`` swaps into the page every few seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import StaffRequest, staff_required
from marketplace.dashboard import selectors, services
from marketplace.dashboard.charts import chart_legend, hourly_bars_svg
from marketplace.dashboard.forms import OrderFilterForm, SellerFilterForm, cleaned
from marketplace.dashboard.json_display import json_for_people
from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.selectors import line_fulfillments
from marketplace.returns import selectors as returns_selectors
from sellers.models import PlatformConnection, Seller

PAGE_SIZE = 25
_M = TypeVar("_M", bound=Model)


def _page(request: HttpRequest, queryset: QuerySet[_M]) -> Page[_M]:
    return Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page"))


def _seller_or_404(seller_id: int) -> Seller:
    seller = selectors.seller_get(seller_id=seller_id)
    if seller is None:
        raise Http404("no such seller")
    return seller


def _order_or_404(order_id: int) -> Order:
    order = selectors.order_get_for_staff(order_id=order_id)
    if order is None:
        raise Http404("no such order")
    return order


def _connection_of(seller: Seller) -> PlatformConnection | None:
    try:
        return seller.connection
    except PlatformConnection.DoesNotExist:
        return None


def _sync_of(order: Order) -> OrderSync | None:
    try:
        return order.sync
    except OrderSync.DoesNotExist:
        return None


# --- overview --------------------------------------------------------------------------


def _overview_context() -> dict:
    overview = selectors.overview_get(now=timezone.now())
    return {
        "overview": overview,
        "chart": hourly_bars_svg(
            overview.chart, title="Platform calls per hour, last 24 hours (UTC)"
        ),
        "legend": chart_legend(),
    }


@require_GET
@staff_required
def overview(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/overview.html", _overview_context())


@require_GET
@staff_required
@never_cache
def overview_live(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/_overview_live.html", _overview_context())


# --- sellers ---------------------------------------------------------------------------


@require_GET
@staff_required
def seller_list(request: HttpRequest) -> HttpResponse:
    form = SellerFilterForm(request.GET)
    params = cleaned(form)
    sort = params["sort"] or "name"
    sellers = selectors.seller_list(
        search=(params["q"] or "").strip(),
        state=params["state"] or "",
        has_failures=bool(params["has_failures"]),
        sort=sort,
    )
    return render(
        request,
        "dashboard/seller_list.html",
        {
            "form": form,
            "page": _page(request, sellers),
            "sort": sort,
            "filtered": form.has_changed(),
        },
    )


def _seller_status_context(seller: Seller) -> dict:
    return {
        "seller": seller,
        "connection": _connection_of(seller),
        "pull_state": selectors.seller_pull_state(seller_id=seller.id),
        "sync_counts": selectors.sync_status_tallies(seller_id=seller.id),
        "now": timezone.now(),
    }


@require_GET
@staff_required
def seller_detail(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    context = _seller_status_context(seller)
    context.update(
        failed_count=next(
            (t.count for t in context["sync_counts"] if t.value == OrderSync.Status.FAILED), 0
        ),
        events=selectors.seller_connection_events(seller_id=seller.id),
        page=_page(request, selectors.order_list_for_staff(seller_id=seller.id)),
        calls=selectors.seller_recent_calls(seller_id=seller.id),
        reported=selectors.seller_reported_problems(seller_id=seller.id),
        actions=selectors.staff_actions_for(seller_id=seller.id),
    )
    return render(request, "dashboard/seller_detail.html", context)


@require_GET
@staff_required
@never_cache
def seller_live(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    return render(request, "dashboard/_seller_live.html", _seller_status_context(seller))


# --- orders ----------------------------------------------------------------------------


@require_GET
@staff_required
def order_list(request: HttpRequest) -> HttpResponse:
    form = OrderFilterForm(request.GET)
    params = cleaned(form)
    orders = selectors.order_list_for_staff(
        search=(params["q"] or "").strip(),
        sync_status=params["status"] or "",
        seller_id=params["seller"],
        state=params["state"] or "",
        has_problems=bool(params["problems"]),
    )
    return render(
        request,
        "dashboard/order_list.html",
        {"form": form, "page": _page(request, orders), "filtered": form.has_changed()},
    )


def _order_status_context(order: Order) -> dict:
    return {
        "order": order,
        "sync": _sync_of(order),
        "history": selectors.order_history(order_id=order.id),
    }


@require_GET
@staff_required
def order_detail(request: HttpRequest, order_id: int) -> HttpResponse:
    order = _order_or_404(order_id)
    sync = _sync_of(order)
    context = _order_status_context(order)
    context.update(
        lines=line_fulfillments(order),
        problems=list(order.problems.all()),
        calls=selectors.order_calls(order=order),
        payload=json_for_people(sync.last_payload if sync else None),
        response=json_for_people(sync.last_response if sync else None),
        actions=selectors.staff_actions_for(order_id=order.id),
    )
    after_sale = returns_selectors.order_returns_and_refunds(order_id=order.id)
    context.update(
        after_sale=after_sale,
        timeline=returns_selectors.order_timeline(after_sale=after_sale, events=context["history"]),
    )
    return render(request, "dashboard/order_detail.html", context)


ORDER_LIVE_PARTS = {
    "sync": "dashboard/_order_sync.html",
    "history": "dashboard/_order_history.html",
}


@require_GET
@staff_required
@never_cache
def order_live(request: HttpRequest, order_id: int) -> HttpResponse:
    """The part of the order page a push changes: ``?part=sync`` or ``?part=history``."""
    template = ORDER_LIVE_PARTS.get(request.GET.get("part", ""), ORDER_LIVE_PARTS["sync"])
    # No prefetches: only the sync row and the history change while a push runs.
    order = Order.objects.select_related("sync").filter(pk=order_id).first()
    if order is None:
        raise Http404("no such order")
    return render(request, template, _order_status_context(order))


# --- actions: POST + CSRF, confirmed first -------------------------------------------------


@dataclass(frozen=True)
class Confirmation:
    title: str
    question: str
    button: str
    danger: bool = False


def _confirmed_action(
    request: HttpRequest,
    *,
    confirmation: Confirmation,
    back_url: str,
    run: Callable[[], StaffAction],
) -> HttpResponse:
    """Run the action once confirmed, else show the confirmation page.

    With JavaScript the button's ``confirm()`` sets ``confirmed=yes`` before the POST;
    without it the first POST lands here unconfirmed and gets this small page instead.
    """
    # A button elsewhere (the overview's Retry) brings the user back where they were.
    next_url = request.POST.get("next", "")
    if next_url and url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back_url = next_url
    if request.POST.get("confirmed") != "yes":
        return render(
            request,
            "dashboard/confirm.html",
            {"confirmation": confirmation, "action_url": request.path, "back_url": back_url},
        )
    action = run()
    (messages.success if action.ok else messages.error)(request, action.result)
    return redirect(back_url)


@require_POST
@staff_required
def order_retry(request: StaffRequest, order_id: int) -> HttpResponse:
    order = _order_or_404(order_id)
    return _confirmed_action(
        request,
        confirmation=Confirmation(
            f"Retry order {order.mp_order_number}",
            f"Push order {order.mp_order_number} to the platform again now?",
            "Retry push",
        ),
        back_url=reverse("dashboard:order", args=[order.id]),
        run=lambda: services.staff_order_retry(order=order, actor=request.user),
    )


@require_POST
@staff_required
def seller_retry_failed(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    return _confirmed_action(
        request,
        confirmation=Confirmation(
            f"Retry failed pushes of {seller.display_name}",
            f"Push every failed order of {seller.display_name} again now?",
            "Retry all failed",
        ),
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: services.staff_seller_failed_retry(seller=seller, actor=request.user),
    )


@require_POST
@staff_required
def seller_refresh(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    return _confirmed_action(
        request,
        confirmation=Confirmation(
            f"Refresh the connection of {seller.display_name}",
            f"Refresh the platform access token of {seller.display_name} now?",
            "Refresh now",
        ),
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: services.staff_connection_refresh(seller=seller, actor=request.user),
    )


@require_POST
@staff_required
def seller_pull(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    return _confirmed_action(
        request,
        confirmation=Confirmation(
            f"Pull {seller.display_name} now",
            f"Read {seller.display_name}'s changed fulfillments from the platform now?",
            "Pull now",
        ),
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: services.staff_seller_pull(seller=seller, actor=request.user),
    )


@require_POST
@staff_required
def seller_disconnect(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = _seller_or_404(seller_id)
    return _confirmed_action(
        request,
        confirmation=Confirmation(
            f"Disconnect {seller.display_name}",
            f"Disconnect {seller.display_name} from the platform? The stored tokens are "
            "deleted; orders wait until the seller connects again.",
            "Disconnect",
            danger=True,
        ),
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: services.staff_connection_disconnect(seller=seller, actor=request.user),
    )
