"""The sandbox's pages in words and looks: the consent page's Approve is the primary
button, Deny a secondary one beside it with space between, and signing out is a quiet
link-like button set apart below; the state page says a pending order awaits payment."""

from __future__ import annotations

import re

import requests

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.order_source.test_oauth import _authorize_url, _sign_in
from tests.support.sandbox_process import SandboxProcess


def test_approve_deny_and_sign_out_look_different_and_stand_apart(
    accounts: SandboxProcess,
) -> None:
    browser = requests.Session()
    consent = _sign_in(browser, browser.get(_authorize_url(accounts), timeout=10), "alice-pw")
    html = consent.text
    approve = re.search(r"<button[^>]*id=\"approve-button\"[^>]*>", html)
    deny = re.search(r"<button[^>]*id=\"deny-button\"[^>]*>", html)
    signout = re.search(r"<button[^>]*id=\"signout-button\"[^>]*>", html)
    assert approve, html
    assert deny, html
    assert signout, html
    assert "class=" not in approve.group(0)  # the primary style
    assert 'class="secondary"' in deny.group(0)
    assert 'class="quiet"' in signout.group(0)
    assert '<form method="post" id="consent-form" class="choices">' in html
    assert '<form method="post" id="signout-form" class="aside">' in html
    assert "Not alice?" in html
    css = browser.get(accounts.base_url + "/sandbox/sandbox.css", timeout=10).text
    assert re.search(r"\.choices \{[^}]*gap: \.75rem", css)
    assert re.search(r"form\.aside \{[^}]*margin-top", css)


def test_the_state_page_says_a_pending_order_awaits_payment(
    alice: Api, sandbox: SandboxProcess
) -> None:
    response = alice.put_order(order_body("PAY-LATER-1", marketplace_state="PENDING"))
    assert response.status_code == 201, response.text
    html = requests.get(sandbox.base_url + "/sandbox/", timeout=10).text
    assert "awaiting payment: the seller ships it once it is paid" in html
