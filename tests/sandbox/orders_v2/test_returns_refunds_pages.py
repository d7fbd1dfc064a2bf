"""Returns and refunds on the sandbox's pages: the v2 order page shows them with what the
marketplace reported and plays the seller by hand (authorize, reject, refund, a seller
refund) through CSRF-protected forms; the state page lists the latest of both."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from tests.sandbox.conftest import Api, csrf_token
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    return_line,
    shipped_order,
)
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


@pytest.fixture
def web() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def _return_ids(seller: SellerApi) -> list[str]:
    return [row["id"] for row in seller.ok("GET", "/returns")["returns"]]


def _order_page(seller: SellerApi, number: str) -> str:
    (order,) = seller.orders(marketplace_order_number=number)
    return f"/sandbox/v2/orders/{order['id']}/"


def test_authorize_then_refund_from_the_order_page(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, web: requests.Session
) -> None:
    shipped_order(alice, sandbox, "PGR-1")
    assert put_return(alice, "PGR-1", "RET-1", return_body()).status_code == 200
    url = sandbox.base_url + _order_page(seller, "PGR-1")
    (rid,) = _return_ids(seller)
    page = web.get(url, timeout=10).text
    assert "RET-1" in page
    assert "AWAITING_AUTHORIZATION" in page
    assert f'id="authorize-{rid}"' in page
    assert f'id="reject-{rid}"' not in page  # reading A: a refusal has no state
    assert f'id="refund-{rid}"' not in page  # not preauthorized
    token = csrf_token(page)
    no_csrf = web.post(url + f"returns/{rid}/authorize", data={"rma": "X"}, timeout=10)
    assert no_csrf.status_code == 403
    done = web.post(
        url + f"returns/{rid}/authorize", data={"csrfmiddlewaretoken": token, "rma": "RMA-PAGE"}
    )
    assert done.status_code == 200
    assert "return RET-1: AUTHORIZED" in done.text
    assert "RMA-PAGE" in done.text
    assert f'id="refund-{rid}"' in done.text
    again = web.post(
        url + f"returns/{rid}/authorize", data={"csrfmiddlewaretoken": token, "rma": "RMA-2"}
    )
    assert again.status_code == 409
    assert "cannot authorize a return that is AUTHORIZED" in again.text
    refunded = web.post(
        url + f"returns/{rid}/refund",
        data={"csrfmiddlewaretoken": token, "principal-R1": "10.00", "shipping-R1": "1.5"},
    )
    assert refunded.status_code == 200
    assert "return RET-1: REFUNDED" in refunded.text
    view = alice.call("GET", "/orders/PGR-1/returns/RET-1/refunds").json()
    assert view["rma"] == "RMA-PAGE"
    assert view["merchant_refund_lines"] == [
        {
            "mp_return_line_number": "R1",
            "principal_refund_amount": 10,
            "shipping_refund_amount": 1.5,
        }
    ]
    report = [{"code": "EXCESS_REFUND", "message": "too much for line R1"}]
    assert alice.call("POST", "/orders/PGR-1/returns/RET-1/errors", json=report).ok
    shown = web.get(url, timeout=10).text
    assert "EXCESS_REFUND" in shown
    assert "too much for line R1" in shown


def test_reject_and_a_preauthorized_refund_from_the_page(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, web: requests.Session
) -> None:
    shipped_order(alice, sandbox, "PGR-2")
    assert put_return(alice, "PGR-2", "A", return_body()).ok
    pre = return_body(return_line(mp_return_line_number="P1", preauthorized=True))
    assert put_return(alice, "PGR-2", "B", pre).ok
    url = sandbox.base_url + _order_page(seller, "PGR-2")
    first, second = _return_ids(seller)
    token = csrf_token(web.get(url, timeout=10).text)
    page = web.get(url, timeout=10).text
    assert f'id="authorize-{first}"' in page
    assert f'id="reject-{first}"' not in page  # reading A: a refusal has no state
    refused = web.post(
        url + f"returns/{first}/reject", data={"csrfmiddlewaretoken": token, "reason": "worn"}
    )
    assert refused.status_code == 409
    sandbox.readings(return_refusal="B")
    assert f'id="reject-{first}"' in web.get(url, timeout=10).text
    rejected = web.post(
        url + f"returns/{first}/reject", data={"csrfmiddlewaretoken": token, "reason": "worn"}
    )
    assert "return A: REJECTED" in rejected.text
    refunded = web.post(url + f"returns/{second}/refund", data={"csrfmiddlewaretoken": token})
    assert "return B: REFUNDED" in refunded.text
    assert alice.call("GET", "/orders/PGR-2/returns/A").json()["notes"] == "worn"
    lines = alice.call("GET", "/orders/PGR-2/returns/B/refunds").json()["merchant_refund_lines"]
    assert lines[0]["principal_refund_amount"] == 13.33  # as requested
    wrong = web.post(url + f"returns/{first}/fly", data={"csrfmiddlewaretoken": token})
    assert wrong.status_code == 400


def test_post_a_seller_refund_from_the_page_and_see_it_refused(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, web: requests.Session
) -> None:
    shipped_order(alice, sandbox, "PGR-3")
    url = sandbox.base_url + _order_page(seller, "PGR-3")
    page = web.get(url, timeout=10).text
    assert 'id="seller-refund-form"' in page
    (order,) = seller.orders(marketplace_order_number="PGR-3")
    form = {
        "csrfmiddlewaretoken": csrf_token(page),
        "line_id": order["order_lines"][0]["id"],
        "refund_quantity": "1",
        "refund_reason": "price_error",
        "item_refund": "100.99",
        "refund_notes": "wrong price",
    }
    posted = web.post(url + "refunds", data=form, timeout=10)
    assert posted.status_code == 200
    assert re.search(r"refund \d+ posted", posted.text)
    (refund,) = alice.call("GET", "/refunds").json()["refunds"]
    assert refund["merchant_refund_lines"][0]["item_refund"] == 100.99
    assert refund["notes"] == "wrong price"
    report = [{"code": "EXCESS_ITEM_REFUND", "message": "exceeds the line's cost (39.50)"}]
    path = f"/orders/PGR-3/refunds/{refund['feedamp_refund_id']}/errors"
    assert alice.call("POST", path, json=report).ok
    shown = web.get(url, timeout=10).text
    assert "PAUSED" in shown
    assert "exceeds the line&#x27;s cost (39.50)" in shown
    refund_id = refund["feedamp_refund_id"]
    assert f'id="refund-resolve-{refund_id}"' in shown
    assert refund["merchant_refund_lines"][0]["reason"] == "PRICE_ERROR"
    bad = web.post(url + "refunds", data={**form, "item_refund": "lots"}, timeout=10)
    assert bad.status_code == 400
    state = web.get(sandbox.base_url + "/sandbox/", timeout=10).text
    assert "PGR-3" in state
    assert "EXCESS_ITEM_REFUND" in state


def test_resolve_a_paused_refund_from_the_page(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, web: requests.Session
) -> None:
    shipped_order(alice, sandbox, "PGR-4")
    url = sandbox.base_url + _order_page(seller, "PGR-4")
    made = sandbox.seller_refund(
        "PGR-4", {"mp_line_number": "1", "refund_quantity": 1, "item_refund": "100.99"}
    )
    refund_id = made["feedamp_refund_id"]
    path = f"/orders/PGR-4/refunds/{refund_id}"
    report = [{"code": "EXCESS_ITEM_REFUND", "message": "100.99 over 43.00"}]
    page = web.get(url, timeout=10).text
    assert f'id="refund-resolve-{refund_id}"' not in page  # CREATED: nothing to resolve
    assert alice.call("POST", path + "/errors", json=report).ok
    page = web.get(url, timeout=10).text
    assert f'id="refund-resolve-{refund_id}"' in page
    assert "paused 1 time" in page
    action = url + f"refunds/{refund_id}/resolve"
    form = {"csrfmiddlewaretoken": csrf_token(page), "how": "lines", "item_refund-1": "lots"}
    assert web.post(action, data=form, timeout=10).status_code == 400
    assert alice.call("GET", path).json()["status"] == "PAUSED"
    form = {
        "csrfmiddlewaretoken": csrf_token(page),
        "how": "lines",
        "refund_quantity-1": "1",
        "item_refund-1": "30.00",
        "item_tax_refund-1": "0",
    }
    done = web.post(action, data=form, timeout=10)
    assert done.status_code == 200
    assert f"refund {refund_id} resolved: CREATED" in done.text
    view = alice.call("GET", path).json()
    assert (view["status"], view["errors"]) == ("CREATED", [])
    assert view["merchant_refund_lines"][0]["item_refund"] == 30
    assert web.post(action, data=form, timeout=10).status_code == 409
    assert alice.call("POST", path + "/errors", json=report).ok
    page = web.get(url, timeout=10).text
    assert "paused 2 times" in page
    fit = web.post(action, data={"csrfmiddlewaretoken": csrf_token(page), "how": "fit"})
    assert fit.status_code == 200
    assert alice.call("GET", path).json()["merchant_refund_lines"][0]["item_refund"] == 30
