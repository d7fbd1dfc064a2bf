"""Seller portal: sign-in, the portal page, and the platform connection (connect,
callback, disconnect). Views stay thin: the flow lives in sellers.services."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_GET, require_POST

from sellers import selectors, services
from sellers.errors import AuthorizationFailed, OAuthStateInvalid
from sellers.forms import ConnectionActionForm, SellerSignInForm
from sellers.models import PlatformConnection

# The state hash of the authorization this browser session started (the raw state only
# travels in the authorize URL and the callback).
SESSION_STATE_KEY = "sellers_oauth_state_hash"

View = Callable[..., HttpResponse]

REFUSAL_TEXT = {
    "missing": "The platform's answer carried no state parameter.",
    "unknown": "The platform's answer does not belong to an authorization we started.",
    "other_seller": "The platform's answer belongs to an authorization started by another account.",
    "replayed": "This authorization answer was already used.",
    "expired": "The authorization took longer than 10 minutes and has expired.",
    "session_mismatch": "The authorization was started in another browser session.",
}


def seller_required(view: View) -> View:
    """Signed-in sellers only. Staff and users without a seller profile get a clear 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.user.is_staff:
            return render(request, "sellers/not_a_seller.html", {"staff": True}, status=403)
        seller = selectors.seller_for_user(user=request.user)
        if seller is None:
            return render(request, "sellers/not_a_seller.html", {"staff": False}, status=403)
        request.seller = seller
        return view(request, *args, **kwargs)

    return login_required(wrapper)


class SellerLoginView(auth_views.LoginView):
    template_name = "sellers/login.html"
    authentication_form = SellerSignInForm
    redirect_authenticated_user = True


class SellerLogoutView(auth_views.LogoutView):
    http_method_names = ["post", "options"]


def _connection_context(request: HttpRequest) -> dict:
    connection = selectors.connection_get_for_seller(seller=request.seller)
    now = timezone.now()
    return {
        "seller": request.seller,
        "connection": connection,
        "state": connection.state if connection else PlatformConnection.State.NOT_CONNECTED,
        "State": PlatformConnection.State,
        "notices": selectors.connection_notices(connection=connection, now=now),
        "now": now,
    }


@require_GET
@seller_required
def portal(request: HttpRequest) -> HttpResponse:
    context = _connection_context(request)
    context["events"] = selectors.connection_events_for_seller(seller=request.seller, limit=5)
    # Imported here: orders depend on sellers, not the other way round, except this page.
    from marketplace.dashboard.selectors import seller_todo
    from marketplace.orders.selectors import order_sync_status_counts

    counts = order_sync_status_counts(seller_id=request.seller.id)
    context["todo"] = seller_todo(seller=request.seller)
    context["order_counts"] = counts
    context["order_total"] = sum(counts.values())
    context["order_waiting"] = (
        counts["pending"] + counts["retrying"] + counts["waiting_for_connection"]
    )
    return render(request, "sellers/portal.html", context)


@require_GET
@seller_required
@never_cache
def connection(request: HttpRequest) -> HttpResponse:
    context = _connection_context(request)
    context["events"] = selectors.connection_events_for_seller(seller=request.seller, limit=25)
    return render(request, "sellers/connection.html", context)


@require_POST
@seller_required
def connection_connect(request: HttpRequest) -> HttpResponse:
    start = services.connection_authorization_start(seller=request.seller, actor=request.user)
    request.session[SESSION_STATE_KEY] = start.state_hash
    return redirect(start.url)


@require_GET
@never_cache
@sensitive_variables()
def connection_callback(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        # login_required would bounce through the login page with the unspent code and
        # the state in its ?next= URL: into the Location header, the browser history and
        # every access log on the way. Nothing of them is kept; the seller starts again.
        return render(request, "sellers/callback_signed_out.html", status=403)
    return _connection_callback(request)


@seller_required
@sensitive_variables()
def _connection_callback(request: HttpRequest) -> HttpResponse:
    try:
        services.connection_authorization_complete(
            seller=request.seller,
            actor=request.user,
            state=request.GET.get("state", ""),
            session_state_hash=request.session.get(SESSION_STATE_KEY),
            code=request.GET.get("code", ""),
            error=request.GET.get("error", ""),
            error_description=request.GET.get("error_description", ""),
        )
    except OAuthStateInvalid as exc:
        return render(
            request,
            "sellers/callback_refused.html",
            {"reason": REFUSAL_TEXT.get(exc.reason, "The answer could not be verified.")},
            status=400,
        )
    except AuthorizationFailed as exc:
        request.session.pop(SESSION_STATE_KEY, None)
        return render(
            request,
            "sellers/callback_failed.html",
            {"denied": exc.denied, "reason": exc.reason},
            status=200 if exc.denied else (502 if exc.__cause__ else 400),
        )
    request.session.pop(SESSION_STATE_KEY, None)
    messages.success(request, "Connected to the platform.")
    return redirect("sellers:connection")


@require_POST
@seller_required
def connection_disconnect(request: HttpRequest) -> HttpResponse:
    form = ConnectionActionForm(request.POST)
    if not form.is_valid():
        raise Http404("no such connection")
    # Scoped to the signed-in seller: another seller's id is simply not found.
    own = get_object_or_404(
        PlatformConnection, id=form.cleaned_data["connection_id"], seller=request.seller
    )
    # Asked first, as staff actions are: the browser's confirm() sets confirmed=yes;
    # without JavaScript the first POST gets a confirmation page instead.
    if request.POST.get("confirmed") != "yes":
        return render(request, "sellers/disconnect_confirm.html", {"connection": own})
    services.connection_disconnect(connection_id=own.id, actor=request.user)
    messages.info(
        request,
        "Disconnected. The authorization stored here was deleted; new orders wait until "
        "you connect again.",
    )
    return redirect("sellers:connection")
