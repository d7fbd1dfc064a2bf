"""The Authentication API: the two-step login (password, then the e-mailed code) and the
accounts and databases the API user can reach.

Facts from shared/spec/platform-api-contract.md: ``POST /login`` with ``method`` ``token``;
without ``twofa_token`` the platform e-mails a code and answers a ``message``; with it,
``{"status": "success", "token"}``; a wrong password or code is 400 ``Invalid
Authentication``. The accounts come from the paginated ``GET /user/list-accounts`` (the
deprecated ``GET /user/accounts`` only when that one is 404); ``GET /accounts/{id}/dbs``
lists an account's databases. Every call takes the token in ``x-api-key`` and
``Authorization: Bearer`` (the transport sends both). Values are strings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.views.decorators.debug import sensitive_variables

from marketplace.platform.db_resources import segment as path_segment
from marketplace.platform.errors import (
    PlatformMalformedResponse,
    PlatformRejected,
    platform_text,
)
from marketplace.platform.transport import ApiKeyTransport

logger = logging.getLogger(__name__)

# ``/user/list-accounts``: the largest page the reference allows, and a bound on the pages
# read (10 000 accounts): a platform whose pagination never ends cannot loop us forever.
ACCOUNTS_PER_PAGE = 100
ACCOUNTS_MAX_PAGES = 100


class LoginRefused(PlatformRejected):
    """The platform said ``Invalid Authentication``: wrong password or wrong/expired code."""


@dataclass(frozen=True)
class PlatformAccount:
    id: str
    name: str


@dataclass(frozen=True)
class PlatformDatabase:
    id: str
    name: str
    account_id: str


def login_holder(username: str) -> str:
    """The embargo holder (and request budget) of ``/login`` calls: not the API user's.

    A 429 on ``/login`` (wrong codes, repeated starts) must not hold the API user's data
    calls for every feed, and a 429 on data calls must not stop staff signing in."""
    return f"api-login:{username}"


def _login_transport(*, username: str, base_url: str | None) -> ApiKeyTransport:
    transport = ApiKeyTransport(base_url=base_url, api_user=username)
    transport.holder = login_holder(username)
    return transport


def _login_error(exc: PlatformRejected) -> PlatformRejected:
    if exc.status == 400:
        return LoginRefused(exc.message, status=exc.status, code=exc.code)
    return exc


@sensitive_variables("password")
def login_start(*, username: str, password: str, base_url: str | None = None) -> str:
    """First step: the platform e-mails a code. Returns the platform's message."""
    transport = _login_transport(username=username, base_url=base_url)
    body = {"username": username, "password": password, "method": "token"}
    try:
        data = transport.request(
            "POST", "/login", json_body=body, authenticated=False, log_bodies=False
        )
    except PlatformRejected as exc:
        raise _login_error(exc) from exc
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, str) and message:
        return platform_text(message)
    return "A code was sent by e-mail."


@sensitive_variables("password", "code", "token")
def login_finish(
    *, username: str, password: str, code: str, token_name: str, base_url: str | None = None
) -> str:
    """Second step: the code for an API token (returned; the caller stores it encrypted)."""
    transport = _login_transport(username=username, base_url=base_url)
    body = {
        "username": username,
        "password": password,
        "method": "token",
        "twofa_token": code,
        "name": token_name,
    }
    try:
        data = transport.request(
            "POST", "/login", json_body=body, authenticated=False, log_bodies=False
        )
    except PlatformRejected as exc:
        raise _login_error(exc) from exc
    token = data.get("token") if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        raise PlatformMalformedResponse("login answered without a token", status=200)
    return token


class AuthApi:
    """Account and database calls with an API token."""

    def __init__(self, transport: ApiKeyTransport) -> None:
        self.transport = transport

    def accounts(self) -> list[PlatformAccount]:
        """Every account the API user can reach.

        ``GET /user/list-accounts`` first, page after page: the reference marks
        ``/user/accounts`` deprecated in favour of it, and a platform that took the
        deprecation through (reading B) answers 404 there. Only when list-accounts itself
        is 404 (a platform that predates it) do we fall back to ``/user/accounts``; any
        other refusal is the platform's answer and is raised as it is."""
        try:
            items = self._accounts_paginated()
        except PlatformRejected as exc:
            if exc.status != 404:
                raise
            data = self.transport.request("GET", "/user/accounts")
            if not isinstance(data, list):
                raise PlatformMalformedResponse(
                    "accounts answer is not a list", status=200
                ) from None
            items = data
        accounts: dict[str, PlatformAccount] = {}
        for item in items:
            if isinstance(item, dict) and item.get("id") not in (None, ""):
                account = PlatformAccount(
                    id=str(item["id"]), name=str(item.get("account_name") or item["id"])
                )
                accounts.setdefault(account.id, account)  # a page boundary may repeat one
        return list(accounts.values())

    def _accounts_paginated(self) -> list[Any]:
        items: list[Any] = []
        for page in range(1, ACCOUNTS_MAX_PAGES + 1):
            data = self.transport.request(
                "GET",
                "/user/list-accounts",
                params={"page": str(page), "results_per_page": str(ACCOUNTS_PER_PAGE)},
            )
            found = data.get("accounts") if isinstance(data, dict) else None
            if not isinstance(found, list):
                raise PlatformMalformedResponse("list-accounts answer without accounts", status=200)
            items.extend(found)
            pagination = data.get("pagination")
            pagination = pagination if isinstance(pagination, dict) else {}
            try:
                total_pages = int(str(pagination.get("total_pages")))
            except ValueError:
                total_pages = None  # unknown: read on while pages come back full
            if not found or (total_pages is not None and page >= total_pages):
                return items
            if total_pages is None and len(found) < ACCOUNTS_PER_PAGE:
                return items
        logger.warning("list-accounts: stopped after %s pages", ACCOUNTS_MAX_PAGES)
        return items

    def databases(self, *, account_id: str) -> list[PlatformDatabase]:
        data = self.transport.request("GET", f"/accounts/{path_segment(account_id)}/dbs")
        if isinstance(data, dict) and isinstance(data.get("dbs"), list):
            data = data["dbs"]  # tolerate a wrapped list (additive change)
        if not isinstance(data, list):
            raise PlatformMalformedResponse("databases answer is not a list", status=200)
        return [
            PlatformDatabase(
                id=str(item["id"]), name=str(item.get("name") or item["id"]), account_id=account_id
            )
            for item in data
            if isinstance(item, dict) and item.get("id") not in (None, "")
        ]
