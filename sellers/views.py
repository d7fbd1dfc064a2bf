"""The seller's sign-in and the platform connection (connect, callback, disconnect).
Views stay thin: the flow lives in sellers.services. The portal's pages are
marketplace.portal's."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_GET, require_POST

from sellers import selectors, services
from sellers.access import SellerRequest, seller_required
from sellers.errors import AuthorizationFailed, OAuthStateInvalid
from sellers.forms import ConnectionActionForm, SellerSignInForm
from sellers.models import PlatformConnection

# The state hash of the authorization this browser session started (the raw state only
# travels in the authorize URL and the callback).
SESSION_STATE_KEY = "sellers_oauth_state_hash"

REFUSAL_TEXT = {
    "missing": "The platform's answer carried no state parameter.",
    "unknown": "The platform's answer does not belong to an authorization we started.",
    "other_seller": "The platform's answer belongs to an authorization started by another account.",
    "replayed": "This authorization answer was already used.",
    "expired": "The authorization took longer than 10 minutes and has expired.",
    "session_mismatch": "The authorization was started in another browser session.",
}


class SellerLoginView(auth_views.LoginView):
    template_name = "sellers/login.html"
    authentication_form = SellerSignInForm
    redirect_authenticated_user = True


class SellerLogoutView(auth_views.LogoutView):
    http_method_names = ["post", "options"]


@require_GET
@seller_required
@never_cache
def connection(request: SellerRequest) -> HttpResponse:
    context = selectors.connection_card(seller=request.seller, now=timezone.now())
    context["events"] = selectors.connection_events_for_seller(seller=request.seller, limit=25)
    return render(request, "sellers/connection.html", context)


@require_POST
@seller_required
def connection_connect(request: SellerRequest) -> HttpResponse:
    start = services.connection_authorization_start(seller=request.seller, actor=request.user)
    request.session[SESSION_STATE_KEY] = start.state_hash
    return redirect(start.url)


@require_GET
@never_cache
@sensitive_variables()
def connection_callback(request: HttpRequest) -> HttpResponseBase:
    if not request.user.is_authenticated:
        # login_required would bounce through the login page with the unspent code and
        # the state in its ?next= URL: into the Location header, the browser history and
        # every access log on the way. Nothing of them is kept; the seller starts again.
        return render(request, "sellers/callback_signed_out.html", status=403)
    return _connection_callback(request)


@seller_required
@sensitive_variables()
def _connection_callback(request: SellerRequest) -> HttpResponse:
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
def connection_disconnect(request: SellerRequest) -> HttpResponse:
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
