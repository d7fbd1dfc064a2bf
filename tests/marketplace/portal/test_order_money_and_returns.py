"""The seller's order page shows the money (line prices, tax, shipping, discount, total,
refunded, in the order's currency), its returns and refunds open and done with their
amounts, one problem card per kind naming its lines, and never "Up to date" while a
problem is open. The Returns history lists every return with filters."""

from __future__ import annotations

from typing import Any

import pytest

from marketplace.orders.validation import ProblemCode
from sellers.models import Seller
from tests.marketplace.portal.builders import completed_return, money_order, open_return, problem
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db


def test_the_order_page_shows_the_money_in_the_orders_currency(seller: Seller) -> None:
    order = money_order(seller=seller, number="MP-MONEY")
    completed_return(order, refunded="12.00")

    page = page_text(signed_in(seller.user).get(f"/sellers/orders/{order.pk}/"))

    assert 'id="order-total">€29.50<' in page
    for amount in ("€10.00", "€20.00", "€1.60", "€3.00", "\u2212€0.60", "€24.00", "€5.50"):
        assert amount in page, amount
    assert 'id="money-refunded">€12.00<' in page


def test_a_yen_order_has_no_minor_unit(seller: Seller) -> None:
    order = money_order(seller=seller, number="MP-JPY", currency="JPY")
    page = page_text(signed_in(seller.user).get(f"/sellers/orders/{order.pk}/"))
    assert 'id="order-total">¥30<' in page  # 29.50 shown in yen's unit


def test_the_order_page_shows_returns_open_and_done_with_amounts(seller: Seller) -> None:
    order = money_order(seller=seller, number="MP-RET")
    completed_return(order, number="RET-DONE", refunded="12.00")
    open_return(order, number="RET-OPEN")

    page = page_text(signed_in(seller.user).get(f"/sellers/orders/{order.pk}/"))

    assert 'data-return="RET-DONE" data-done="yes"' in page
    assert 'data-return="RET-OPEN" data-done="no"' in page
    assert "Completed" in page
    assert "Waiting for your answer" in page
    assert "Asked back: <strong>€10.50</strong>" in page
    assert 'class="return-refunded">€12.00<' in page


def test_the_returns_history_lists_open_and_done_and_filters(
    seller: Seller, other_seller: Seller
) -> None:
    order = money_order(seller=seller, number="MP-H1")
    completed_return(order, number="RET-DONE")
    open_return(order, number="RET-OPEN")
    completed_return(money_order(seller=other_seller, number="MP-OTHER"), number="RET-THEIRS")
    client = signed_in(seller.user)

    every = page_text(client.get("/sellers/orders/returns/history/"))
    done = page_text(client.get("/sellers/orders/returns/history/?state=done"))
    opened = page_text(client.get("/sellers/orders/returns/history/?state=open"))
    by_date = page_text(client.get("/sellers/orders/returns/history/?since=2026-03-15"))

    assert 'data-return="RET-DONE"' in every
    assert 'data-return="RET-OPEN"' in every
    assert "RET-THEIRS" not in every
    assert 'data-return="RET-DONE"' in done
    assert 'data-return="RET-OPEN"' not in done
    assert 'data-return="RET-OPEN"' in opened
    assert 'data-return="RET-DONE"' not in opened
    assert 'data-return="RET-OPEN"' in by_date  # requested 1 April
    assert 'data-return="RET-DONE"' not in by_date  # requested 2 March
    assert "€12.00" in done
    assert 'href="/sellers/orders/returns/history/"' in page_text(
        client.get("/sellers/orders/returns/")
    )


def test_one_card_per_problem_naming_its_lines_and_no_up_to_date_badge(
    seller: Seller, settings: Any
) -> None:
    settings.PLATFORM_SELLER_ORDER_URL = ""  # no page known: the card names the order
    order = money_order(seller=seller, number="MP-PROB")
    problem(order, code=ProblemCode.INVALID_TRACKING_NUMBER, line="1", message="1Z bad")
    problem(order, code=ProblemCode.INVALID_TRACKING_NUMBER, line="2", message="2Z bad")
    client = signed_in(seller.user)

    page = page_text(client.get(f"/sellers/orders/{order.pk}/"))
    live = page_text(client.get(f"/sellers/orders/{order.pk}/live/"))
    listed = page_text(client.get("/sellers/orders/"))

    assert page.count(f'data-code="{ProblemCode.INVALID_TRACKING_NUMBER}"') == 1
    assert 'href="#line-1">1</a>, <a href="#line-2">2</a>' in page
    assert 'id="line-1"' in page
    assert "Open order <strong>MP-PROB</strong> in your order system" in page
    for text in (page, live, listed):
        assert "Up to date" not in text
        assert "Needs your fix" in text


def test_a_problem_card_links_to_where_the_seller_corrects_the_order(
    seller: Seller, settings: Any
) -> None:
    settings.PLATFORM_SELLER_ORDER_URL = "https://platform.example/orders/{mp_order_number}/fix"
    order = money_order(seller=seller, number="MP PROB/1")
    problem(order, code=ProblemCode.INVALID_TRACKING_NUMBER, line="1", message="1Z bad")

    response = signed_in(seller.user).get(f"/sellers/orders/{order.pk}/")

    assert response.status_code == 200
    page = page_text(response)
    assert (
        page.count('class="fix-link" href="https://platform.example/orders/MP%20PROB%2F1/fix"') == 1
    )
    assert "in your order system on the platform</a>" in page


def test_the_orders_page_says_how_often_shipments_are_read(seller: Seller, settings: Any) -> None:
    settings.PULL_INTERVAL_SECONDS = 90.0
    PlatformConnectionFactory(seller=seller)
    client = signed_in(seller.user)

    for url in ("/sellers/", "/sellers/orders/"):
        page = page_text(client.get(url))
        assert "Shipments are read from the platform every 90 seconds" in page, url
        assert "every s." not in page
