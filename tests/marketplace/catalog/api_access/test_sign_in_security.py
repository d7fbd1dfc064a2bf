"""The API user's sign-in against the sandbox (issue 21): one login call per pending
sign-in however often the code is submitted, a pending sign-in dropped after five wrong
codes, login calls and data calls never holding each other, and the seller-catalog page
building platform URLs only from accounts the platform listed."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from marketplace.catalog.api_access import sign_in
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.feeds import database_link
from marketplace.catalog.models import ApiSignIn, PlatformApiAccess
from marketplace.platform.auth_api import LoginRefused
from marketplace.platform.errors import PlatformRateLimited
from sellers.models import Seller
from tests.marketplace.catalog.platform import API_USER, CatalogWorld, api_sign_in

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = "/dashboard/catalog/api-access/"


@pytest.fixture(autouse=True)
def no_embargo_left_over() -> Any:
    """These tests draw real 429s: their holders' waits must not outlive the test (the
    database rows go with the test's flush; Redis keeps its keys)."""
    from marketplace.platform.auth_api import login_holder
    from marketplace.redis_client import redis_client

    keys = [f"embargo:api-user:{API_USER[0]}", f"embargo:{login_holder(API_USER[0])}"]
    redis_client().delete(*keys)
    yield
    redis_client().delete(*keys)


def staff_client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def start(client: Client) -> None:
    username, password, _ = API_USER
    response = client.post(
        PAGE + "start/", {"username": username, "password": password}, follow=True
    )
    assert response.status_code == 200
    assert "A code was sent by e-mail" in response.content.decode()


def wrong_code(world: CatalogWorld) -> str:
    code = world.sandbox.twofa_code(API_USER[2])
    return "000000" if code != "000000" else "111111"


def login_calls(world: CatalogWorld, since: int) -> list[dict]:
    return world.sandbox.requests_log(endpoint="login", since_seq=since)


def last_seq(world: CatalogWorld) -> int:
    entries = world.sandbox.requests_log(limit=1)
    return entries[-1]["seq"] if entries else 0


def test_two_concurrent_submissions_of_the_code_make_one_login_call_and_both_say_signed_in(
    world: CatalogWorld, staff_user: Any
) -> None:
    # Given staff waiting for the code, and a platform slow to answer /login
    client = staff_client(staff_user)
    start(client)
    code = world.sandbox.twofa_code(API_USER[2])
    world.sandbox.set_faults(endpoint="login", kind="latency", latency_ms=800)
    since = last_seq(world)
    session_cookie = client.cookies["sessionid"].value

    # When the code is submitted twice at once (a double click, the same browser session)
    answers: list[Any] = [None, None]
    barrier = threading.Barrier(2)

    def submit(slot: int) -> None:
        try:
            browser = Client()
            browser.cookies["sessionid"] = session_cookie
            barrier.wait()
            answers[slot] = browser.post(PAGE + "finish/", {"code": code}, follow=True)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    world.sandbox.clear_faults()

    # Then the platform got exactly one login call, and it signed in
    calls = login_calls(world, since)
    assert [call["status"] for call in calls] == [200]
    # And both submissions show "signed in", neither "refused"
    for answer in answers:
        assert answer is not None
        assert answer.status_code == 200
        page = answer.content.decode()
        assert "Signed in: the API token is stored encrypted." in page
        assert "refused" not in page
    access_row = PlatformApiAccess.objects.get(pk=1)
    assert access_row.is_active
    assert ApiSignIn.objects.get().state == ApiSignIn.State.SIGNED_IN


def test_a_submission_of_an_already_signed_in_pending_sign_in_makes_no_call(
    world: CatalogWorld, staff_user: Any
) -> None:
    username, password, email = API_USER
    _, key = sign_in.access_sign_in_begin(username=username, password=password)
    code = world.sandbox.twofa_code(email)
    sign_in.access_sign_in_finish(
        username=username, password=password, code=code, actor=staff_user, key=key
    )
    since = last_seq(world)
    again = sign_in.access_sign_in_finish(
        username=username, password=password, code=code, actor=staff_user, key=key
    )
    assert again.is_active
    assert login_calls(world, since) == []


def test_five_wrong_codes_drop_the_pending_sign_in_and_the_right_code_then_signs_nothing(
    world: CatalogWorld, staff_user: Any
) -> None:
    client = staff_client(staff_user)
    start(client)
    right = world.sandbox.twofa_code(API_USER[2])
    wrong = wrong_code(world)
    since = last_seq(world)
    # Four wrong codes: each refused, saying how many tries are left
    for left in (4, 3, 2, 1):
        page = client.post(PAGE + "finish/", {"code": wrong}, follow=True)
        assert page.status_code == 200
        text = page.content.decode()
        assert "The platform refused the code" in text
        assert f"({left} more {'try' if left == 1 else 'tries'}" in text
        assert 'id="code-form"' in text
    # The fifth drops the pending sign-in: staff start again
    page = client.post(PAGE + "finish/", {"code": wrong}, follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert "refused 5 codes: this sign-in is dropped. Start again" in text
    assert 'id="code-form"' not in text
    assert 'id="sign-in-form"' in text
    # The right code now makes no login call and signs nothing in
    page = client.post(PAGE + "finish/", {"code": right}, follow=True)
    assert page.status_code == 200
    assert "The sign-in expired" in page.content.decode()
    assert [call["status"] for call in login_calls(world, since)] == [400] * 5
    assert not PlatformApiAccess.objects.get(pk=1).is_active
    assert ApiSignIn.objects.get().state == ApiSignIn.State.DROPPED


def test_the_page_says_that_five_wrong_codes_start_the_sign_in_over(
    world: CatalogWorld, staff_user: Any
) -> None:
    client = staff_client(staff_user)
    start(client)
    page = client.get(PAGE)
    assert page.status_code == 200
    assert "After 5 wrong codes this sign-in is dropped" in page.content.decode()


def test_a_wrong_code_then_the_right_one_still_signs_in(
    world: CatalogWorld, staff_user: Any
) -> None:
    username, password, email = API_USER
    _, key = sign_in.access_sign_in_begin(username=username, password=password)
    code = world.sandbox.twofa_code(email)
    with pytest.raises(LoginRefused):
        sign_in.access_sign_in_finish(
            username=username, password=password, code=wrong_code(world), actor=staff_user, key=key
        )
    signed_in = sign_in.access_sign_in_finish(
        username=username, password=password, code=code, actor=staff_user, key=key
    )
    assert signed_in.is_active
    assert ApiSignIn.objects.get(key=key).wrong_codes == 1


def test_a_429_on_login_does_not_hold_the_api_users_data_calls(
    world: CatalogWorld, staff_user: Any
) -> None:
    username, password, _ = API_USER
    api_sign_in(world, staff_user)
    # Given the platform's login limit reached: /login answers 429
    world.sandbox.set_rate_limit("login", limit=1, window_seconds=60)
    sign_in.access_sign_in_start(username=username, password=password)
    with pytest.raises(PlatformRateLimited):
        sign_in.access_sign_in_start(username=username, password=password)
    assert [c["status"] for c in world.sandbox.requests_log(endpoint="login")][-1] == 429
    # Then data calls of the same API user still go out and succeed
    since = last_seq(world)
    accounts = database_link.platform_accounts_list()
    assert [account.id for account in accounts] == [world.account_id]
    assert [c["status"] for c in world.sandbox.requests_log(since_seq=since)] == [200]


def test_a_429_on_data_calls_does_not_hold_signing_in(world: CatalogWorld, staff_user: Any) -> None:
    username, password, email = API_USER
    api_sign_in(world, staff_user)
    # Given the API user's data calls held by a 429
    world.sandbox.set_rate_limit("accounts", limit=1, window_seconds=60)
    database_link.platform_accounts_list()
    with pytest.raises(CatalogError, match=r"(?i)wait|rate"):
        database_link.platform_accounts_list()
    # Then staff can still sign in: both login calls reach the platform
    since = last_seq(world)
    sign_in.access_sign_in_start(username=username, password=password)
    sign_in.access_sign_in_finish(
        username=username,
        password=password,
        code=world.sandbox.twofa_code(email),
        actor=staff_user,
    )
    assert [c["status"] for c in login_calls(world, since)] == [200, 200]


def test_the_seller_catalog_page_asks_only_for_databases_of_a_listed_account(
    world: CatalogWorld, staff_user: Any, seller: Seller
) -> None:
    api_sign_in(world, staff_user)
    client = staff_client(staff_user)
    url = f"/dashboard/catalog/sellers/{seller.pk}/?link=1&account="
    for bad in ("..", "../..", "%2e%2e", "1/../..", "999999"):
        since = last_seq(world)
        page = client.get(url + bad)
        assert page.status_code == 200
        assert "The API user cannot reach that platform account." in page.content.decode()
        # Only the account list was asked for: no databases call, no other path
        paths = [entry["path"] for entry in world.sandbox.requests_log(since_seq=since)]
        assert paths == ["/api.php/user/list-accounts"]
    # A listed account shows its databases
    since = last_seq(world)
    page = client.get(url + world.account_id)
    assert page.status_code == 200
    assert "Alice products" in page.content.decode()
    paths = [entry["path"] for entry in world.sandbox.requests_log(since_seq=since)]
    assert paths == ["/api.php/user/list-accounts", f"/api.php/accounts/{world.account_id}/dbs"]


def test_the_client_quotes_account_ids_and_refuses_dot_segments() -> None:
    from marketplace.platform.auth_api import path_segment

    assert path_segment("12") == "12"
    assert path_segment("a/b?c#d%") == "a%2Fb%3Fc%23d%25"
    for bad in ("", ".", ".."):
        with pytest.raises(ValueError):
            path_segment(bad)


def test_a_dot_segment_account_id_never_reaches_the_platform(
    world: CatalogWorld, staff_user: Any
) -> None:
    api_sign_in(world, staff_user)
    since = last_seq(world)
    for bad in ("..", ".", ""):
        with pytest.raises(CatalogError, match="not a platform account id"):
            database_link.platform_databases_list(account_id=bad)
    assert world.sandbox.requests_log(since_seq=since) == []


def test_start_again_drops_the_pending_sign_in_so_its_code_no_longer_signs_in(
    world: CatalogWorld, staff_user: Any
) -> None:
    client = staff_client(staff_user)
    start(client)
    code = world.sandbox.twofa_code(API_USER[2])
    # Staff click "Start again", then submit the code of the dropped sign-in (a stale tab)
    assert client.post(PAGE + "cancel/").status_code == 302
    assert ApiSignIn.objects.get().state == ApiSignIn.State.DROPPED
    since = last_seq(world)
    with pytest.raises(sign_in.SignInDropped):
        sign_in.access_sign_in_finish(
            username=API_USER[0],
            password=API_USER[1],
            code=code,
            actor=staff_user,
            key=ApiSignIn.objects.get().key,
        )
    assert login_calls(world, since) == []
    assert not PlatformApiAccess.objects.get(pk=1).is_active
