"""The platform client where the documents are silent (the contract's last table): the
accounts from the paginated ``/user/list-accounts`` (``/user/accounts`` only when that is
404), and a schedule answer's ``paused`` as a number or a string, nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from marketplace.platform import auth_api
from marketplace.platform.auth_api import AuthApi
from marketplace.platform.db_resources import schedule_paused
from marketplace.platform.errors import PlatformMalformedResponse, PlatformRejected
from marketplace.platform.exports import ExportsApi
from marketplace.platform.transport import ApiKeyTransport
from tests.marketplace.platform.conftest import Answer, TinyPlatform

pytestmark = pytest.mark.usefixtures("no_embargo")


def transport(platform: TinyPlatform) -> ApiKeyTransport:
    return ApiKeyTransport(base_url=platform.url, token="tok-1", api_user="api-user")


def page(ids: list[int], number: int, total_pages: int | None) -> Answer:
    pagination: dict[str, Any] = {"page": str(number), "results_per_page": "100"}
    if total_pages is not None:
        pagination["total_pages"] = str(total_pages)
    accounts = [{"id": str(n), "account_name": f"Shop {n}"} for n in ids]
    return Answer(200, json.dumps({"accounts": accounts, "pagination": pagination}))


def test_accounts_follow_the_pages_of_list_accounts(tiny_platform: TinyPlatform) -> None:
    tiny_platform.answer(
        "GET",
        "/user/list-accounts",
        page(list(range(1, 101)), 1, 3),
        page(list(range(101, 201)), 2, 3),
        page([201], 3, 3),
    )

    accounts = AuthApi(transport(tiny_platform)).accounts()

    assert [a.id for a in accounts] == [str(n) for n in range(1, 202)]
    assert accounts[0].name == "Shop 1"
    asked = [r for r in tiny_platform.received if r.path == "/user/list-accounts"]
    assert len(asked) == 3
    assert not tiny_platform.requests_to("/user/accounts")


def test_without_total_pages_a_short_page_is_the_last(tiny_platform: TinyPlatform) -> None:
    tiny_platform.answer("GET", "/user/list-accounts", page([1, 2], 1, None))

    assert [a.id for a in AuthApi(transport(tiny_platform)).accounts()] == ["1", "2"]
    assert len(tiny_platform.requests_to("/user/list-accounts")) == 1


def test_pages_are_bounded(tiny_platform: TinyPlatform, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth_api, "ACCOUNTS_MAX_PAGES", 3)
    # A platform whose pagination never ends (the same full page again and again)
    tiny_platform.answer("GET", "/user/list-accounts", page(list(range(1, 101)), 1, 999))

    accounts = AuthApi(transport(tiny_platform)).accounts()

    assert len(tiny_platform.requests_to("/user/list-accounts")) == 3
    assert len(accounts) == 100  # the repeats are one account each


def test_the_deprecated_accounts_call_only_when_list_accounts_is_404(
    tiny_platform: TinyPlatform,
) -> None:
    # TinyPlatform answers 404 to list-accounts (an older platform)
    tiny_platform.answer(
        "GET", "/user/accounts", Answer(200, json.dumps([{"id": "7", "account_name": "Shop"}]))
    )

    accounts = AuthApi(transport(tiny_platform)).accounts()

    assert [(a.id, a.name) for a in accounts] == [("7", "Shop")]
    assert len(tiny_platform.requests_to("/user/list-accounts")) == 1


def test_another_refusal_of_list_accounts_is_not_papered_over(
    tiny_platform: TinyPlatform,
) -> None:
    tiny_platform.answer(
        "GET", "/user/list-accounts", Answer(400, '{"status":"fail","message":"page: bad"}')
    )

    with pytest.raises(PlatformRejected):
        AuthApi(transport(tiny_platform)).accounts()
    assert not tiny_platform.requests_to("/user/accounts")


@pytest.mark.parametrize(("paused", "expected"), [(0, False), (1, True), ("0", False), ("1", True)])
def test_paused_as_a_number_or_a_string(
    tiny_platform: TinyPlatform, paused: Any, expected: bool
) -> None:
    tiny_platform.answer(
        "PUT",
        "/dbs/1/exports/2/schedule",
        Answer(200, json.dumps({"cron": "0 2 * * *", "paused": paused})),
    )

    answer = ExportsApi(transport(tiny_platform)).schedule(
        db_id="1", export_id="2", day="*", hour="2", minute="0"
    )

    assert schedule_paused(answer) is expected


@pytest.mark.parametrize("paused", [True, "true", "yes", 2, "", None, "01"])
def test_any_other_paused_is_a_malformed_answer(tiny_platform: TinyPlatform, paused: Any) -> None:
    body: dict[str, Any] = {"cron": "0 2 * * *", "paused": paused}
    if paused is None:
        del body["paused"]
    tiny_platform.answer("PUT", "/dbs/1/exports/2/schedule", Answer(200, json.dumps(body)))

    with pytest.raises(PlatformMalformedResponse):
        ExportsApi(transport(tiny_platform)).schedule(
            db_id="1", export_id="2", day="*", hour="2", minute="0"
        )
