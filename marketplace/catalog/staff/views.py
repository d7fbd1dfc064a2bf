"""Staff pages of the catalog: the Platform API access, each seller's database link and
feed, feed runs and listings. Thin: forms validate, services act, selectors read."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import staff_required
from marketplace.catalog import selectors
from marketplace.catalog.api_access import api_user
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.ingest import feed_run_confirm, feed_run_retry
from marketplace.catalog.feeds.mapping import mapping_from_json
from marketplace.catalog.listing_status import edrts_sender, join_import
from marketplace.catalog.models import FeedRun, Listing, StatusImport
from marketplace.catalog.staff.forms import (
    FeedForm,
    ListingFilterForm,
    ScheduleChangeForm,
)
from marketplace.catalog.staff.seller_actions import act, back, seller_or_404, source_or_404
from marketplace.platform.errors import PlatformError
from marketplace.staff_confirm import Confirmation, Outcome, confirmed_action
from sellers.models import Seller

PAGE_SIZE = 50


# --- sellers' catalogs ----------------------------------------------------------------------


@require_GET
@staff_required
def overview(request: HttpRequest) -> HttpResponse:
    sellers = Seller.objects.select_related("catalog_source").order_by("display_name", "id")
    page = Paginator(sellers, PAGE_SIZE).get_page(request.GET.get("page"))
    summaries = selectors.status_sync_summaries(seller_ids=[s.pk for s in page.object_list])
    return render(
        request,
        "catalog/staff_overview.html",
        {
            "access": api_user.access_get(),
            "sellers": page,
            "rows": [(seller, summaries[seller.pk]) for seller in page.object_list],
        },
    )


@require_GET
@staff_required
def seller_catalog(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = selectors.catalog_source_of(seller_id=seller.pk)
    api = api_user.access_get()
    accounts: list[Any] = []
    databases: list[Any] = []
    account_id = request.GET.get("account", "")
    platform_error = ""
    if api.is_active and (request.GET.get("link") or source is None):
        try:
            accounts = database_link.platform_accounts_list()
            # Only an account the platform listed: the id goes into a platform URL.
            if account_id and account_id not in {account.id for account in accounts}:
                platform_error = "The API user cannot reach that platform account."
                account_id = ""
            if account_id:
                databases = database_link.platform_databases_list(account_id=account_id)
        except CatalogError as exc:
            platform_error = str(exc)
        api = api_user.access_get()
    listing_filter = ListingFilterForm(request.GET)
    listing_filter.is_valid()
    criteria = getattr(listing_filter, "cleaned_data", {})
    listings = selectors.listing_list(
        seller_id=seller.pk, q=criteria.get("q", ""), status=criteria.get("status", "")
    )
    feed_form: FeedForm | None = FeedForm()
    schedule_form = None
    if source is not None and source.has_feed:
        minute, hour, _, _, day = (source.cron or "0 2 * * *").split()[:5]
        schedule_form = ScheduleChangeForm(
            initial={"day": day, "hour": hour, "minute": minute, "paused": source.paused}
        )
        feed_form = None
    return render(
        request,
        "catalog/seller_catalog.html",
        {
            "seller": seller,
            "source": source,
            "access": api,
            "accounts": accounts,
            "databases": databases,
            "account_id": account_id,
            "platform_error": platform_error,
            "feed_form": feed_form,
            "schedule_form": schedule_form,
            "mapping": mapping_from_json(source.export_fields) if source else None,
            "runs": selectors.feed_run_list(seller_id=seller.pk),
            "status_sync": selectors.status_sync_summaries(seller_ids=[seller.pk])[seller.pk],
            "edrts_addressable": (
                source is None
                or edrts_sender.product_id_field(source) == edrts_sender.PRODUCT_ID_FIELD
            ),
            "counts": selectors.listing_counts(seller_id=seller.pk),
            # The live-updates card points at the import only once there is one.
            "status_import_active": source is not None
            and StatusImport.objects.filter(source=source, state=StatusImport.State.ACTIVE)
            .exclude(import_id="")
            .exists(),
            "listing_filter": listing_filter,
            "page": Paginator(listings, PAGE_SIZE).get_page(request.GET.get("page")),
        },
    )


@require_POST
@staff_required
def seller_link(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    try:
        source = database_link.seller_database_link(
            seller=seller,
            account_id=request.POST.get("account", ""),
            db_id=request.POST.get("db", ""),
            actor=request.user,
        )
    except CatalogError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"{seller.display_name}'s catalog now comes from database “{source.db_name}”."
        )
    return back(seller)


@require_POST
@staff_required
def feed_provision(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = source_or_404(seller)
    form = FeedForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            for error in errors:
                # django-stubs: an ErrorList's items are str when iterated (its __getitem__
                # turns each ValidationError into its message), not ValidationError.
                messages.error(request, f"{field}: {error}" if field != "__all__" else error)  # type: ignore[arg-type]
        return back(seller)
    data = form.cleaned_data
    try:
        # The listing-status import follows the feed; its failure leaves the feed standing.
        _, import_error = join_import.catalog_feed_provision(
            source=source,
            feed=provision.FeedSettings(
                mapping=data["mapping"],
                delimiter=data["delimiter"],
                compression=data["compression"] or "",
                day=data["day"],
                hour=str(data["hour"]),
                minute=str(data["minute"]),
            ),
        )
    except CatalogError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "The catalog feed is set up at the platform.")
        if import_error:
            messages.error(request, import_error)
    return back(seller)


@require_POST
@staff_required
def feed_schedule(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = source_or_404(seller)
    form = ScheduleChangeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a day, an hour (0-23) and a minute (0-59).")
        return back(seller)
    data = form.cleaned_data
    try:
        provision.feed_schedule_set(
            source=source,
            day=data["day"],
            hour=str(data["hour"]),
            minute=str(data["minute"]),
            paused=data["paused"],
        )
    except CatalogError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Schedule changed.")
    return back(seller)


@require_POST
@staff_required
def feed_run(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return act(
        request,
        seller,
        lambda: provision.feed_run_request(source=source_or_404(seller)),
        success="The platform is running the feed; the file appears under Feed runs.",
    )


@require_POST
@staff_required
def feed_remove(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = source_or_404(seller)
    return act(
        request,
        seller,
        lambda: join_import.catalog_feed_remove(source=source),
        success="The feed was removed, here and at the platform.",
        confirmation=Confirmation(
            "Remove the catalog feed",
            "Delete this seller's feed (and its listing-status import) at the platform? "
            "This cannot be undone: listings stay as they are, and no new file arrives "
            "until a feed is set up again.",
            "Remove feed",
            danger=True,
        ),
    )


@require_POST
@staff_required
def feed_status(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return act(
        request,
        seller,
        lambda: provision.feed_status_refresh(source=source_or_404(seller)),
        errors=(CatalogError, PlatformError),
    )


@require_GET
@staff_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(FeedRun.objects.select_related("seller"), pk=run_id)
    return render(request, "catalog/run_detail.html", {"run": run, "staff": True})


@require_POST
@staff_required
def run_retry(request: HttpRequest, run_id: int) -> HttpResponse:
    run = feed_run_retry(run_id=run_id, actor=request.user)
    if run.status == FeedRun.Status.RECEIVED:
        messages.success(request, "The file is queued for ingestion again.")
    elif not run.file_path:
        kept = (
            f"{settings.FEED_FAILED_FILE_RETENTION_HOURS} hours (a malformed file)"
            if run.malformed
            else f"{settings.FEED_FILE_RETENTION_DAYS} days"
        )
        messages.error(
            request,
            f"This run's file was deleted {kept} after it arrived; run the feed again at "
            "the platform instead.",
        )
    else:
        messages.error(request, "Only a failed run can be retried.")
    return redirect("catalog:run", run_id=run.pk)


@require_POST
@staff_required
def run_confirm(request: HttpRequest, run_id: int) -> HttpResponse:
    """A held full feed (it would deactivate much of the catalog): apply it after all."""
    run = get_object_or_404(FeedRun.objects.select_related("seller"), pk=run_id)
    if run.status != FeedRun.Status.HELD:
        messages.error(request, "Only a held run can be applied.")
        return redirect("catalog:run", run_id=run.pk)
    return confirmed_action(
        request,
        confirmation=Confirmation(
            "Apply this feed file",
            f"{run.error[:1].upper()}{run.error[1:]}. Apply it anyway, deactivating those "
            "listings? This cannot be undone.",
            "Apply and deactivate",
            danger=True,
        ),
        back_url=reverse("catalog:run", args=[run.pk]),
        run=lambda: _run_apply(run_id=run.pk, actor=request.user),
    )


def _run_apply(*, run_id: int, actor: Any) -> Outcome:
    run = feed_run_confirm(run_id=run_id, actor=actor)
    if run.status == FeedRun.Status.RECEIVED:
        return Outcome(True, "The file is queued to be applied, deactivations included.")
    if not run.file_path:
        return Outcome(False, "This run's file is gone; run the feed again at the platform.")
    return Outcome(False, "A newer file arrived since; only the latest can be applied.")


@require_GET
@staff_required
def listing_detail(request: HttpRequest, listing_id: int) -> HttpResponse:
    listing = get_object_or_404(Listing.objects.select_related("seller"), pk=listing_id)
    return render(request, "catalog/listing_detail.html", {"listing": listing, "staff": True})
