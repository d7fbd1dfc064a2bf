"""The dashboard's buttons on one seller or one order: POST + CSRF, through the one
"confirm, then act" step (``marketplace.staff_confirm``). Only Disconnect asks first: it
deletes the stored tokens, and only the seller can connect again. A retry re-sends the
order as it is, a refresh or a pull reads again: nothing to undo, so they act at once."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from marketplace.access import StaffRequest, staff_required
from marketplace.dashboard import selectors, services
from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import Order
from marketplace.staff_confirm import Confirmation, Outcome, confirmed_action
from sellers.models import Seller


def seller_or_404(seller_id: int) -> Seller:
    seller = selectors.seller_get(seller_id=seller_id)
    if seller is None:
        raise Http404("no such seller")
    return seller


def order_or_404(order_id: int) -> Order:
    order = selectors.order_get_for_staff(order_id=order_id)
    if order is None:
        raise Http404("no such order")
    return order


def outcome_of(action: StaffAction) -> Outcome:
    return Outcome(ok=action.ok, message=action.result)


@require_POST
@staff_required
def order_retry(request: StaffRequest, order_id: int) -> HttpResponse:
    order = order_or_404(order_id)
    return confirmed_action(
        request,
        back_url=reverse("dashboard:order", args=[order.id]),
        run=lambda: outcome_of(services.staff_order_retry(order=order, actor=request.user)),
    )


@require_POST
@staff_required
def seller_retry_failed(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return confirmed_action(
        request,
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: outcome_of(
            services.staff_seller_failed_retry(seller=seller, actor=request.user)
        ),
    )


@require_POST
@staff_required
def seller_refresh(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return confirmed_action(
        request,
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: outcome_of(
            services.staff_connection_refresh(seller=seller, actor=request.user)
        ),
    )


@require_POST
@staff_required
def seller_pull(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return confirmed_action(
        request,
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: outcome_of(services.staff_seller_pull(seller=seller, actor=request.user)),
    )


@require_POST
@staff_required
def seller_disconnect(request: StaffRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return confirmed_action(
        request,
        confirmation=Confirmation(
            f"Disconnect {seller.display_name}",
            f"Disconnect {seller.display_name} from the platform? This cannot be undone: "
            "the stored tokens are deleted, and orders wait until the seller connects again.",
            "Disconnect",
            danger=True,
        ),
        back_url=reverse("dashboard:seller", args=[seller.id]),
        run=lambda: outcome_of(
            services.staff_connection_disconnect(seller=seller, actor=request.user)
        ),
    )
