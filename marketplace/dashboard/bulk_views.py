"""The list pages' bulk buttons: the ticked rows (``ids``) of one page, one POST.

Retry and Pull now are harmless (they re-send or re-read) and act at once; Disconnect
cannot be undone and asks first, naming how many sellers it touches. Each goes back to
the list as it was (its filters and page, the form's ``next``)."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from marketplace.access import StaffRequest, staff_required
from marketplace.dashboard import bulk
from marketplace.staff_confirm import Confirmation, confirmed_action


@require_POST
@staff_required
def orders_retry(request: StaffRequest) -> HttpResponse:
    ids = bulk.selected_ids(request.POST.getlist("ids"))
    return confirmed_action(
        request,
        back_url=reverse("dashboard:orders"),
        run=lambda: bulk.staff_orders_retry(order_ids=ids, actor=request.user),
    )


@require_POST
@staff_required
def sellers_pull(request: StaffRequest) -> HttpResponse:
    ids = bulk.selected_ids(request.POST.getlist("ids"))
    return confirmed_action(
        request,
        back_url=reverse("dashboard:sellers"),
        run=lambda: bulk.staff_sellers_pull(seller_ids=ids, actor=request.user),
    )


@require_POST
@staff_required
def sellers_disconnect(request: StaffRequest) -> HttpResponse:
    ids = bulk.selected_ids(request.POST.getlist("ids"))
    count = len(ids)
    sellers = f"{count} seller{'s' if count != 1 else ''}"
    return confirmed_action(
        request,
        confirmation=(
            Confirmation(
                f"Disconnect {sellers}",
                f"Disconnect {sellers} from the platform? This cannot be undone: their "
                "stored tokens are deleted, and their orders wait until each seller "
                "connects again.",
                f"Disconnect {sellers}",
                danger=True,
            )
            if ids
            else None
        ),
        back_url=reverse("dashboard:sellers"),
        run=lambda: bulk.staff_sellers_disconnect(seller_ids=ids, actor=request.user),
    )
