"""Staff actions on a seller's listing-status import and on the catalog's credentials.
Thin: forms validate, services act; each action goes back to the seller's catalog page
(the import's card there is ``templatetags/status_import.py``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from marketplace.access import staff_required
from marketplace.catalog import credential_rotation
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.staff.forms import ImportScheduleForm, ImportTargetsForm
from marketplace.catalog.staff.seller_actions import act, back, seller_or_404, source_or_404
from marketplace.platform.errors import PlatformError
from marketplace.staff_confirm import Confirmation


@require_POST
@staff_required
def import_provision(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return act(
        request,
        seller,
        lambda: join_import.status_import_provision(source=source_or_404(seller)),
        success="The listing-status import is set up at the platform.",
    )


@require_POST
@staff_required
def import_schedule(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    form = ImportScheduleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a day, an hour (or every hour) and a minute (0-59).")
        return back(seller)
    data = form.cleaned_data
    return act(
        request,
        seller,
        lambda: join_import.status_import_schedule_set(
            source=source_or_404(seller),
            day=data["day"],
            hour=data["hour"],
            minute=str(data["minute"]),
            paused=data["paused"],
        ),
        success="The import's schedule changed.",
    )


@require_POST
@staff_required
def import_targets(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    form = ImportTargetsForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            label = form.fields[field].label if field in form.fields else field
            for error in errors:
                messages.error(request, f"{label}: {error}")
        return back(seller)
    return act(
        request,
        seller,
        lambda: join_import.status_import_targets_set(
            source=source_or_404(seller), targets=form.targets()
        ),
        success="Target fields saved; the platform holds the new file map.",
    )


@require_POST
@staff_required
def import_status(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return act(
        request,
        seller,
        lambda: join_import.status_import_status_refresh(source=source_or_404(seller)),
        errors=(CatalogError, PlatformError),
    )


@require_POST
@staff_required
def credentials_rotate(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = source_or_404(seller)
    return act(
        request,
        seller,
        lambda: credential_rotation.catalog_credentials_rotate(source=source),
        success="New credentials for the feed and the listing-status file.",
        confirmation=Confirmation(
            "Rotate the catalog credentials",
            "Give the feed and the listing-status file new passwords? The platform gets "
            "them at once; the old ones stop working, and this cannot be undone.",
            "Rotate credentials",
        ),
    )
