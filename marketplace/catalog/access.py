"""The marketplace's API access: the two-step sign-in, the stored token, and the switch to
"needs sign-in" when the platform answers 401.

Every catalog call to the Authentication or Platform API goes through ``platform_api()``:
it refuses to start while the access is not active (catalog work waits instead of
failing call after call), and turns a 401 into "needs sign-in" plus a notice to staff.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from marketplace.catalog.errors import ApiAccessNeeded
from marketplace.catalog.models import PlatformApiAccess
from marketplace.platform import auth_api
from marketplace.platform.auth_api import AuthApi
from marketplace.platform.errors import PlatformAuthError
from marketplace.platform.exports import ExportsApi
from marketplace.platform.imports import ImportsApi
from marketplace.platform.transport import ApiKeyTransport
from sellers import vault

logger = logging.getLogger(__name__)

ACCESS_PK = 1


def access_get() -> PlatformApiAccess:
    access, _ = PlatformApiAccess.objects.get_or_create(pk=ACCESS_PK)
    return access


def access_token_name() -> str:
    """Tokens are named after the environment, so each environment's token is told apart."""
    return f"marketplace-{settings.DJANGO_ENV}"


@sensitive_variables("password")
def access_sign_in_start(*, username: str, password: str) -> str:
    """Step 1: the platform e-mails a code. Raises ``LoginRefused`` on a wrong password."""
    message = auth_api.login_start(username=username, password=password)
    PlatformApiAccess.objects.filter(pk=access_get().pk).update(code_sent_at=timezone.now())
    return message


@sensitive_variables("password", "code", "token")
def access_sign_in_finish(
    *, username: str, password: str, code: str, actor: Any
) -> PlatformApiAccess:
    """Step 2: exchange the code for an API token and store it encrypted."""
    token = auth_api.login_finish(
        username=username, password=password, code=code, token_name=access_token_name()
    )
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
    return access


def access_sign_out() -> None:
    PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(
        state=PlatformApiAccess.State.NOT_SIGNED_IN, token_ciphertext="", last_error=""
    )


def access_mark_needs_sign_in(*, token_ciphertext: str, reason: str) -> bool:
    """The platform refused this token: access → needs sign-in, staff told (once).

    Conditional on the token that failed: a 401 for an old token that arrives after
    someone signed in again must not undo the new sign-in.
    """
    now = timezone.now()
    changed = PlatformApiAccess.objects.filter(
        pk=ACCESS_PK, state=PlatformApiAccess.State.ACTIVE, token_ciphertext=token_ciphertext
    ).update(
        state=PlatformApiAccess.State.NEEDS_SIGN_IN,
        needs_sign_in_since=now,
        last_error=reason[:500],
    )
    if changed:
        logger.warning("platform API access needs sign-in: %s", reason)
        from marketplace.catalog.emails import staff_notify_needs_sign_in

        transaction.on_commit(lambda: staff_notify_needs_sign_in(reason=reason))
    return bool(changed)


@dataclass
class PlatformApi:
    auth: AuthApi
    exports: ExportsApi
    imports: ImportsApi


@contextmanager
def platform_api(*, hold_wait: float = 0.0, seller_id: int | None = None) -> Iterator[PlatformApi]:
    """The Authentication and Platform API clients with the stored token.

    Raises ``ApiAccessNeeded`` before any call when nobody is signed in, and after a 401
    (the access is then marked "needs sign-in").
    """
    access = access_get()
    if not access.is_active:
        raise ApiAccessNeeded(
            "The marketplace's platform API user needs to sign in (staff: Platform API access)."
        )
    transport = ApiKeyTransport(
        token=access.token, api_user=access.username, hold_wait=hold_wait, seller_id=seller_id
    )
    try:
        yield PlatformApi(
            auth=AuthApi(transport),
            exports=ExportsApi(transport),
            imports=ImportsApi(transport),
        )
    except PlatformAuthError as exc:
        access_mark_needs_sign_in(
            token_ciphertext=access.token_ciphertext,
            reason=f"The platform refused the API token: {exc.message}",
        )
        raise ApiAccessNeeded(
            "The platform no longer accepts the marketplace's API token: "
            "staff must sign in again on the Platform API access page."
        ) from exc
    PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(last_checked_at=timezone.now())


def access_check() -> PlatformApiAccess:
    """One cheap authenticated call (the account list) to see whether the token works."""
    from marketplace.platform.errors import PlatformError

    try:
        with platform_api() as api:
            api.auth.accounts()
    except ApiAccessNeeded:
        pass
    except PlatformError as exc:
        PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(last_error=str(exc)[:500])
    return access_get()
