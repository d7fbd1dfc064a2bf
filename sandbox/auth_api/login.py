"""``POST /login`` in two steps: password → a six-digit code by e-mail; password + code →
a named API token. Both wrong-password and wrong-code answers are the contract's
400 ``Invalid Authentication``.

Our choices (README): a code lives 10 minutes (sandbox clock) and is single use; a new
first call replaces the user's earlier unused codes (the latest e-mail is the one that
works); ``method`` must be ``token``.
"""

import secrets
from datetime import timedelta

from django.db import transaction

from sandbox.auth_api.outbox import email_send
from sandbox.common import clock
from sandbox.common.api_php.errors import ApiError
from sandbox.common.secrets_hashing import password_matches, secret_matches, token_hash
from sandbox.records.api_users.models import PlatformUser, TwoFactorCode
from sandbox.records.api_users.tokens import token_issue

CODE_LIFETIME = timedelta(minutes=10)
INVALID = "Invalid Authentication"
METHODS = ("token",)


def _text(body: dict, key: str) -> str | None:
    value = body.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ApiError(f"{key}: must be a string")
    return str(value)


def _required_text(body: dict, key: str) -> str:
    value = _text(body, key)
    if value is None:
        raise ApiError(f"{key}: required")
    return value


def _mask(email: str) -> str:
    name, _, domain = email.partition("@")
    return f"{name[:1]}***@{domain}" if domain else "***"


def code_send(*, user: PlatformUser) -> str:
    """A new code for ``user`` (earlier unused ones stop working), e-mailed to the outbox."""
    code = f"{secrets.randbelow(1_000_000):06d}"
    now = clock.now()
    with transaction.atomic():
        TwoFactorCode.objects.filter(user=user, spent_at__isnull=True).update(spent_at=now)
        TwoFactorCode.objects.create(
            user=user, code_hash=token_hash(code), created_at=now, expires_at=now + CODE_LIFETIME
        )
    email_send(
        to=user.email,
        subject="Your two-factor authentication token",
        body=(
            f"Hello {user.username},\n\nyour two-factor authentication token is {code}.\n"
            "It works once, within 10 minutes.\n"
        ),
        code=code,
    )
    return code


def _code_spend(*, user: PlatformUser, code: str) -> bool:
    now = clock.now()
    with transaction.atomic():
        for candidate in TwoFactorCode.objects.select_for_update().filter(
            user=user, spent_at__isnull=True, expires_at__gt=now
        ):
            if secret_matches(code, candidate.code_hash):
                # A conditional update: two racing second calls cannot both spend it.
                return (
                    TwoFactorCode.objects.filter(id=candidate.id, spent_at__isnull=True).update(
                        spent_at=now
                    )
                    == 1
                )
    return False


def login(*, body: dict) -> dict:
    username = _required_text(body, "username")
    password = _required_text(body, "password")
    method = _required_text(body, "method")
    if method not in METHODS:
        raise ApiError(f"method: must be one of {', '.join(METHODS)}")
    twofa = _text(body, "twofa_token")
    name = _text(body, "name") or ""
    user = PlatformUser.objects.filter(username=username).first()
    if user is None or not password_matches(password, user.password_hash):
        raise ApiError(INVALID)
    if twofa is None:
        code_send(user=user)
        return {
            "status": "success",
            "message": f"A two-factor authentication token was sent to {_mask(user.email)}",
        }
    if not _code_spend(user=user, code=twofa.strip()):
        raise ApiError(INVALID)
    return {"status": "success", "token": token_issue(user=user, name=name)}
