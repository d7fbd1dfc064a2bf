"""Staff buttons of a seller's live status updates (EDRTS): re-send every status, retry
the stopped sender, and the on/off switch (off asks first: statuses then reach the seller
up to an hour late, through the hourly listing-status import)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from marketplace.access import staff_required
from marketplace.catalog.listing_status import edrts_sender
from marketplace.catalog.staff.seller_actions import back, seller_or_404
from marketplace.staff_confirm import Confirmation, Outcome, confirmed_action


@require_POST
@staff_required
def status_sync_resend(request: HttpRequest, seller_id: int) -> HttpResponse:
    """Queue every current status of the seller again (and forgive past failures)."""
    seller = seller_or_404(seller_id)
    recorded = edrts_sender.status_sync_resend_all(seller_id=seller.pk)
    messages.success(request, f"{recorded} statuses queued to be sent again.")
    return back(seller)


@require_POST
@staff_required
def status_sync_retry(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    edrts_sender.status_sync_retry(seller_id=seller.pk)
    messages.success(request, "The sender starts again now.")
    return back(seller)


@require_POST
@staff_required
def status_sync_switch(request: HttpRequest, seller_id: int) -> HttpResponse:
    """Live status updates (EDRTS) on or off for the seller; the listing-status import's
    schedule follows. Off asks first: statuses then reach the seller up to an hour late."""
    seller = seller_or_404(seller_id)
    enabled = request.POST.get("enabled") == "on"

    def run() -> Outcome:
        import_error = edrts_sender.status_sync_enable(seller_id=seller.pk, enabled=enabled)
        if import_error:
            messages.error(request, f"The import's schedule did not change: {import_error}")
        if enabled:
            return Outcome(
                True,
                "Live status updates are on: statuses reach the seller's database within "
                "seconds; the listing-status import runs daily to catch up.",
            )
        return Outcome(
            True,
            "Live status updates are off: the listing-status import alone brings statuses, hourly.",
        )

    return confirmed_action(
        request,
        confirmation=None
        if enabled
        else Confirmation(
            f"Turn live status updates off for {seller.display_name}",
            f"Turn live status updates (EDRTS) off for {seller.display_name}? Statuses then "
            "reach the seller's database only through the hourly listing-status import, up "
            "to an hour late.",
            "Turn live status updates off",
            danger=True,
        ),
        back_url=reverse("catalog:seller", args=[seller.pk]),
        run=run,
    )
