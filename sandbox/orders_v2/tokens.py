"""Order-API users and their tokens: ``GET /get_token`` and the checks of every v2 call.

A token lives 24 hours (our choice; "keep it until it expires") and a user holds at most
100 active ones: the 101st request is refused (429), so a client must reuse its token.
"""

import base64
import binascii
import secrets
from datetime import timedelta

from django.db import transaction
from django.http import HttpRequest

from sandbox.common import clock
from sandbox.common.secrets_hashing import new_token, password_hash, password_matches, token_hash
from sandbox.orders_v2.models import ApiToken, ApiUser
from sandbox.records.orders.models import Seller

TOKEN_LIFETIME = timedelta(hours=24)
MAX_ACTIVE_TOKENS = 100


class AuthProblem(Exception):
    """An answer to give instead of the call: 401, 403 or 429 with a message."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error


def api_user_upsert(
    *, seller: Seller, username: str, password: str, client_id: str | None = None
) -> ApiUser:
    existing = ApiUser.objects.filter(username=username).first()
    client = client_id or (
        existing.client_id if existing else str(secrets.randbelow(9 * 10**5) + 10**5)
    )
    if not client.isdigit():
        raise ValueError("client_id must be digits")
    user, _ = ApiUser.objects.update_or_create(
        username=username,
        defaults={"seller": seller, "password_hash": password_hash(password), "client_id": client},
        create_defaults={
            "seller": seller,
            "password_hash": password_hash(password),
            "client_id": client,
            "created_at": clock.now(),
        },
    )
    return user


def _basic_credentials(request: HttpRequest) -> tuple[str, str] | None:
    scheme, _, encoded = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, colon, password = decoded.partition(":")
    return (username, password) if colon else None


def basic_user(request: HttpRequest) -> ApiUser:
    credentials = _basic_credentials(request)
    if credentials is None:
        raise AuthProblem(
            401, "unauthorized", "HTTP Basic credentials of an order-API user are required"
        )
    user = ApiUser.objects.select_related("seller").filter(username=credentials[0]).first()
    if user is None or not password_matches(credentials[1], user.password_hash):
        raise AuthProblem(401, "unauthorized", "wrong username or password")
    return user


def _client_check(request: HttpRequest, user: ApiUser, *, required: bool) -> None:
    client = request.META.get("HTTP_CLIENT")
    if client is None:
        if required:
            raise AuthProblem(
                401, "unauthorized", "the client header (numeric client id) is required"
            )
        return
    if client != user.client_id:
        raise AuthProblem(403, "forbidden", "this client id is not allowed for this user")


def active_tokens(user: ApiUser) -> int:
    return ApiToken.objects.filter(user=user, expires_at__gt=clock.now()).count()


def token_issue(request: HttpRequest) -> str:
    """A new token for the request's Basic user, unless it already holds 100 active ones."""
    user = basic_user(request)
    _client_check(request, user, required=False)
    now = clock.now()
    with transaction.atomic():
        # Serialise one user's requests so two at the cap cannot both slip under it.
        ApiUser.objects.select_for_update().filter(id=user.id).first()
        if ApiToken.objects.filter(user=user, expires_at__gt=now).count() >= MAX_ACTIVE_TOKENS:
            raise AuthProblem(
                429,
                "too_many_tokens",
                f"{MAX_ACTIVE_TOKENS} tokens are active for this user: reuse one until it expires",
            )
        raw = new_token("v2t")
        ApiToken.objects.create(
            user=user, token_hash=token_hash(raw), created_at=now, expires_at=now + TOKEN_LIFETIME
        )
    return raw


def v2_user(request: HttpRequest) -> ApiUser:
    """The user behind a v2 call: Basic credentials, a live token of theirs, their client id."""
    user = basic_user(request)
    raw = request.META.get("HTTP_TOKEN", "").strip()
    if not raw:
        raise AuthProblem(
            401, "unauthorized", "the token header is required (GET /api/v1/get_token)"
        )
    token = ApiToken.objects.filter(token_hash=token_hash(raw)).first()
    if token is None or token.user_id != user.id:
        raise AuthProblem(401, "unauthorized", "unknown token")
    if token.expires_at <= clock.now():
        raise AuthProblem(401, "unauthorized", "token expired: get a new one")
    _client_check(request, user, required=True)
    return user
