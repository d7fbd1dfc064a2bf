"""Staff pages of the marketplace's Platform API access: sign the API user in (password,
then the code the platform e-mails), cancel, and check that the platform still accepts
the token. The password waits encrypted in the session, no longer than the code lives."""

from __future__ import annotations

import time
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_GET, require_POST

from marketplace.access import staff_required
from marketplace.catalog.api_access import api_user, sign_in
from marketplace.catalog.api_access.forms import CodeForm, SignInForm
from marketplace.platform.auth_api import LoginRefused
from marketplace.platform.errors import PlatformError
from sellers import vault

PENDING_KEY = "catalog_api_sign_in"
# The platform's code is valid 10 minutes; the password waits (encrypted) no longer.
PENDING_SECONDS = sign_in.PENDING_SECONDS


# --- Platform API access ------------------------------------------------------------------


def _pending(request: HttpRequest) -> dict[str, Any] | None:
    pending = request.session.get(PENDING_KEY)
    # Also gone when its password no longer decrypts (its key removed meanwhile: the
    # session's copy lives PENDING_SECONDS and is not rotated): staff start again.
    if (
        not pending
        or time.time() - pending.get("at", 0) > PENDING_SECONDS
        or not vault.token_decryptable(pending.get("password", ""))
    ):
        request.session.pop(PENDING_KEY, None)
        return None
    kept: dict[str, Any] = pending
    return kept


@require_GET
@staff_required
def api_access(request: HttpRequest) -> HttpResponse:
    pending = _pending(request)
    return render(
        request,
        "catalog/api_access.html",
        {
            "access": api_user.access_get(),
            "pending": pending,
            "sign_in_form": SignInForm(initial={"username": (pending or {}).get("username", "")}),
            "code_form": CodeForm(),
            "token_name": sign_in.access_token_name(),
            "max_wrong_codes": sign_in.MAX_WRONG_CODES,
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
        message, key = sign_in.access_sign_in_begin(username=username, password=password)
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
        sign_in.access_sign_in_finish(
            username=pending["username"],
            password=vault.token_decrypt(pending["password"]),
            code=form.cleaned_data["code"],
            actor=request.user,
            key=pending.get("key", ""),
        )
    except sign_in.SignInDropped as exc:
        request.session.pop(PENDING_KEY, None)
        messages.error(request, str(exc))
        return redirect("catalog:api_access")
    except LoginRefused:
        left = sign_in.access_sign_in_wrong_codes_left(key=pending.get("key", ""))
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
        sign_in.access_sign_in_cancel(key=pending["key"])
    return redirect("catalog:api_access")


@require_POST
@staff_required
def api_access_check(request: HttpRequest) -> HttpResponse:
    checked = api_user.access_check()
    if checked.is_active:
        messages.success(request, "The platform accepts the API token.")
    else:
        messages.error(request, f"The API access needs sign-in. {checked.last_error}")
    return redirect("catalog:api_access")
