"""Staff pages of the catalog: the Platform API access, each seller's database link and
feed, feed runs and listings. Thin: forms validate, services act, selectors read."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import staff_required
from marketplace.catalog import access, edrts_sender, feeds, imports, links, selectors
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.forms import (
    CodeForm,
    FeedForm,
    ListingFilterForm,
    ScheduleChangeForm,
    SignInForm,
)
from marketplace.catalog.ingest import feed_run_confirm, feed_run_retry
from marketplace.catalog.mapping import mapping_from_json
from marketplace.catalog.models import FeedRun, StatusImport
from marketplace.catalog.seller_actions import act, back, seller_or_404, source_or_404
from marketplace.platform.auth_api import LoginRefused
from marketplace.platform.errors import PlatformError
from marketplace.staff_confirm import Confirmation, Outcome, confirmed_action
from sellers import vault
from sellers.models import Seller

PENDING_KEY = "catalog_api_sign_in"
# The platform's code is valid 10 minutes; the password waits (encrypted) no longer.
PENDING_SECONDS = access.PENDING_SECONDS
PAGE_SIZE = 50


# --- Platform API access ------------------------------------------------------------------


def _pending(request: HttpRequest) -> dict[str, Any] | None:
    pending = request.session.get(PENDING_KEY)
    if not pending or time.time() - pending.get("at", 0) > PENDING_SECONDS:
        request.session.pop(PENDING_KEY, None)
        return None
    return pending


@require_GET
@staff_required
def api_access(request: HttpRequest) -> HttpResponse:
    pending = _pending(request)
    return render(
        request,
        "catalog/api_access.html",
        {
            "access": access.access_get(),
            "pending": pending,
            "sign_in_form": SignInForm(initial={"username": (pending or {}).get("username", "")}),
            "code_form": CodeForm(),
            "token_name": access.access_token_name(),
            "max_wrong_codes": access.MAX_WRONG_CODES,
        },
    )


@require_POST
@sensitive_post_parameters("password")
@staff_required
@sensitive_variables("password")
def api_access_start(request: HttpRequest) -> HttpResponse:
    form = SignInForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Enter the API user's username and password.")
        return redirect("catalog:api_access")
    username = form.cleaned_data["username"]
    password = form.cleaned_data["password"]
    try:
        message, key = access.access_sign_in_begin(username=username, password=password)
    except LoginRefused:
        messages.error(request, "The platform refused the username or password.")
        return redirect("catalog:api_access")
    except PlatformError as exc:
        messages.error(request, f"The platform could not be asked: {exc}")
        return redirect("catalog:api_access")
    request.session[PENDING_KEY] = {
        "username": username,
        "password": vault.token_encrypt(password),
        "at": time.time(),
        "key": key,
    }
    messages.success(request, f"A code was sent by e-mail. ({message})")
    return redirect("catalog:api_access")


@require_POST
@sensitive_post_parameters("code")
@staff_required
@sensitive_variables("password", "code")
def api_access_finish(request: HttpRequest) -> HttpResponse:
    pending = _pending(request)
    if pending is None:
        messages.error(request, "The sign-in expired: enter the username and password again.")
        return redirect("catalog:api_access")
    form = CodeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The code is the digits from the e-mail.")
        return redirect("catalog:api_access")
    try:
        access.access_sign_in_finish(
            username=pending["username"],
            password=vault.token_decrypt(pending["password"]),
            code=form.cleaned_data["code"],
            actor=request.user,
            key=pending.get("key", ""),
        )
    except access.SignInDropped as exc:
        request.session.pop(PENDING_KEY, None)
        messages.error(request, str(exc))
        return redirect("catalog:api_access")
    except LoginRefused:
        left = access.access_sign_in_wrong_codes_left(key=pending.get("key", ""))
        messages.error(
            request,
            "The platform refused the code: check the e-mail and try again "
            f"({left} more {'try' if left == 1 else 'tries'}, then the sign-in starts over).",
        )
        return redirect("catalog:api_access")
    except PlatformError as exc:
        messages.error(request, f"The platform could not be asked: {exc}")
        return redirect("catalog:api_access")
    request.session.pop(PENDING_KEY, None)
    messages.success(request, "Signed in: the API token is stored encrypted.")
    return redirect("catalog:api_access")


@require_POST
@staff_required
def api_access_cancel(request: HttpRequest) -> HttpResponse:
    pending = request.session.pop(PENDING_KEY, None)
    if pending and pending.get("key"):
        access.access_sign_in_cancel(key=pending["key"])
    return redirect("catalog:api_access")


@require_POST
@staff_required
def api_access_check(request: HttpRequest) -> HttpResponse:
    checked = access.access_check()
    if checked.is_active:
        messages.success(request, "The platform accepts the API token.")
    else:
        messages.error(request, f"The API access needs sign-in. {checked.last_error}")
    return redirect("catalog:api_access")


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
            "access": access.access_get(),
            "sellers": page,
            "rows": [(seller, summaries[seller.pk]) for seller in page.object_list],
        },
    )


@require_GET
@staff_required
def seller_catalog(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    source = selectors.catalog_source_of(seller_id=seller.pk)
    api = access.access_get()
    accounts: list[Any] = []
    databases: list[Any] = []
    account_id = request.GET.get("account", "")
    platform_error = ""
    if api.is_active and (request.GET.get("link") or source is None):
        try:
            accounts = links.platform_accounts_list()
            # Only an account the platform listed: the id goes into a platform URL.
            if account_id and account_id not in {account.id for account in accounts}:
                platform_error = "The API user cannot reach that platform account."
                account_id = ""
            if account_id:
                databases = links.platform_databases_list(account_id=account_id)
        except CatalogError as exc:
            platform_error = str(exc)
        api = access.access_get()
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
        source = links.seller_database_link(
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
        _, import_error = imports.catalog_feed_provision(
            source=source,
            feed=feeds.FeedSettings(
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
        feeds.feed_schedule_set(
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
        lambda: feeds.feed_run_request(source=source_or_404(seller)),
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
        lambda: imports.catalog_feed_remove(source=source),
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
        lambda: feeds.feed_status_refresh(source=source_or_404(seller)),
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
    from marketplace.catalog.models import Listing

    listing = get_object_or_404(Listing.objects.select_related("seller"), pk=listing_id)
    return render(request, "catalog/listing_detail.html", {"listing": listing, "staff": True})


# --- listing statuses through EDRTS -----------------------------------------------------------


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
