"""The two-step sign-in of the marketplace's API user: the password (the platform e-mails
a code), then the code, exchanged for an API token stored encrypted (``api_user.py``
keeps it and builds the clients on it). One pending sign-in at a time, a few wrong codes
at most.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from marketplace.catalog import dispatch
from marketplace.catalog.api_access.api_user import ACCESS_PK, access_get
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.models import ApiSignIn, PlatformApiAccess, StatusSync
from marketplace.platform import auth_api
from marketplace.platform.errors import PlatformError
from sellers import vault


def access_token_name() -> str:
    """Tokens are named after the environment, so each environment's token is told apart."""
    return f"marketplace-{settings.DJANGO_ENV}"


# Wrong codes one pending sign-in may try; then it is dropped and staff start again (the
# password first, a new code). Guessing stays far below the platform's limit on /login.
MAX_WRONG_CODES = 5
# The platform's code is valid 10 minutes; a pending sign-in lasts no longer.
PENDING_SECONDS = 600


class SignInDropped(CatalogError):
    """The pending sign-in is gone (too many wrong codes, expired, or replaced by a newer
    one): staff must start again with the username and password."""


@sensitive_variables("password")
def access_sign_in_begin(*, username: str, password: str) -> tuple[str, str]:
    """Step 1: the platform e-mails a code. Returns its message and the pending sign-in's
    key (the caller keeps it to finish). Raises ``LoginRefused`` on a wrong password.

    Starting drops every earlier pending sign-in: one at a time."""
    message = auth_api.login_start(username=username, password=password)
    key = secrets.token_urlsafe(24)
    now = timezone.now()
    with transaction.atomic():
        ApiSignIn.objects.filter(state=ApiSignIn.State.PENDING).update(
            state=ApiSignIn.State.DROPPED, finished_at=now
        )
        # Finished sign-ins are kept a while (what happened), not for ever.
        ApiSignIn.objects.filter(started_at__lt=now - timedelta(days=30)).delete()
        ApiSignIn.objects.create(key=key, username=username, started_at=now)
        PlatformApiAccess.objects.filter(pk=access_get().pk).update(code_sent_at=now)
    return message, key


@sensitive_variables("password")
def access_sign_in_start(*, username: str, password: str) -> str:
    """Step 1 without the key: ``access_sign_in_finish`` then finishes the latest one."""
    message, _ = access_sign_in_begin(username=username, password=password)
    return message


@sensitive_variables("password", "code", "token")
def access_sign_in_finish(
    *, username: str, password: str, code: str, actor: Any, key: str | None = None
) -> PlatformApiAccess:
    """Step 2: exchange the code for an API token and store it encrypted.

    The pending sign-in's row is locked for the call, so concurrent submissions of one
    pending sign-in (a double click) send the code once: the later ones wait, then find
    it signed in and make no call. A wrong code counts; the ``MAX_WRONG_CODES``-th drops
    the pending sign-in (``SignInDropped``). ``key`` names the pending sign-in (from
    ``access_sign_in_begin``); without it, the user's latest one.
    """
    outcome: BaseException | None = None
    with transaction.atomic():
        rows = ApiSignIn.objects.select_for_update()
        if key is not None:
            pending = rows.filter(key=key, username=username).first()
        else:
            pending = rows.filter(username=username).order_by("-id").first()
        if pending is None:
            raise SignInDropped("The sign-in is gone: enter the username and password again.")
        if pending.state == ApiSignIn.State.SIGNED_IN:
            return access_get()  # the same submission already signed in: no second call
        expired = timezone.now() - pending.started_at > timedelta(seconds=PENDING_SECONDS)
        if pending.state == ApiSignIn.State.DROPPED or expired:
            raise SignInDropped("The sign-in expired: enter the username and password again.")
        try:
            token = auth_api.login_finish(
                username=username, password=password, code=code, token_name=access_token_name()
            )
        except auth_api.LoginRefused as exc:
            pending.wrong_codes += 1
            if pending.wrong_codes >= MAX_WRONG_CODES:
                pending.state = ApiSignIn.State.DROPPED
                pending.finished_at = timezone.now()
                outcome = SignInDropped(
                    f"The platform refused {pending.wrong_codes} codes: this sign-in is "
                    "dropped. Start again with the username and password (a new code is "
                    "e-mailed)."
                )
            else:
                outcome = exc
            pending.save(update_fields=["wrong_codes", "state", "finished_at"])
        except PlatformError as exc:
            # Not the code's fault (a 5xx, a 429, an unreadable answer): the pending sign-in
            # stays, and the transaction commits so the call log keeps the failed call.
            outcome = exc
        else:
            access = access_get()
            access.username = username
            access.token_ciphertext = vault.token_encrypt(token)
            access.token_name = access_token_name()
            access.state = PlatformApiAccess.State.ACTIVE
            access.signed_in_at = timezone.now()
            access.signed_in_by = actor
            access.needs_sign_in_since = None
            access.last_error = ""
            access.save()
            pending.state = ApiSignIn.State.SIGNED_IN
            pending.finished_at = timezone.now()
            pending.save(update_fields=["state", "finished_at"])
            status_senders_wake()
            return access
    # The wrong code's count (and the call log of a failed call) is committed before the
    # refusal is raised.
    assert outcome is not None
    raise outcome


def status_senders_wake() -> int:
    """The API user signed in again: every EDRTS sender that waits for it drains at once
    (after commit), not at the end of its fallback countdown. Returns how many."""
    waiting = list(
        StatusSync.objects.filter(waiting_for_access=True).values_list("seller_id", flat=True)
    )
    StatusSync.objects.filter(seller_id__in=waiting).update(
        waiting_for_access=False, next_attempt_at=None
    )
    for seller_id in waiting:
        dispatch.status_sync_drain_enqueue(seller_id)
    return len(waiting)


def access_sign_in_cancel(*, key: str) -> None:
    """Staff start again: the pending sign-in takes no more codes."""
    ApiSignIn.objects.filter(key=key, state=ApiSignIn.State.PENDING).update(
        state=ApiSignIn.State.DROPPED, finished_at=timezone.now()
    )


def access_sign_in_wrong_codes_left(*, key: str) -> int:
    pending = ApiSignIn.objects.filter(key=key).first()
    return max(0, MAX_WRONG_CODES - pending.wrong_codes) if pending else 0


def access_sign_out() -> None:
    PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(
        state=PlatformApiAccess.State.NOT_SIGNED_IN, token_ciphertext="", last_error=""
    )
