"""The seller's order list: buyer, total, ship-by and a late flag; filters by state, date,
late and problem; sorting; and a CSV export whose rows are the filtered list's."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.orders.validation import ProblemCode
from sellers.models import Seller
from tests.marketplace.portal.builders import days_ago, money_order, problem
from tests.support.app_fixtures import page_text, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def orders(seller: Seller, other_seller: Seller) -> dict[str, Order]:
    now = timezone.now()
    made = {
        "late": money_order(
            seller=seller,
            number="MP-LATE",
            purchase_date=days_ago(5),
            latest_ship_date=now - timedelta(days=1),
            customer_full_name="Grace Hopper",
        ),
        "shipped": money_order(
            seller=seller,
            number="MP-SHIPPED",
            purchase_date=days_ago(40),
            latest_ship_date=now - timedelta(days=35),
            state=Order.State.SHIPPED,
            customer_full_name="=HYPERLINK(1)",
        ),
        "fresh": money_order(
            seller=seller,
            number="MP-FRESH",
            purchase_date=days_ago(1),
            latest_ship_date=now + timedelta(days=2),
        ),
        "theirs": money_order(seller=other_seller, number="MP-THEIRS"),
    }
    problem(made["fresh"], code=ProblemCode.UNKNOWN_CARRIER, line="1")
    return made


def _listed(page: str) -> list[str]:
    return re.findall(r'<tr data-order="([^"]+)">', page)


def _exported(client: Client, query: str) -> list[list[str]]:
    response = client.get(f"/sellers/orders/export.csv?{query}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    assert response.streaming
    text = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(text)))


def test_the_list_shows_buyer_total_ship_by_and_late(seller: Seller, orders: dict) -> None:
    page = page_text(signed_in(seller.user).get("/sellers/orders/"))
    assert _listed(page) == ["MP-FRESH", "MP-LATE", "MP-SHIPPED"]  # newest placed first
    assert "Grace Hopper" in page
    assert "€29.50" in page
    assert page.count("late-flag") == 1  # the shipped order is past its date but not late
    assert "MP-THEIRS" not in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("late=on", ["MP-LATE"]),
        ("problems=on", ["MP-FRESH"]),
        ("state=SHIPPED", ["MP-SHIPPED"]),
        ("q=grace", ["MP-LATE"]),
        ("sort=placed_asc", ["MP-SHIPPED", "MP-LATE", "MP-FRESH"]),
        ("sort=ship_by", ["MP-SHIPPED", "MP-LATE", "MP-FRESH"]),
    ],
)
def test_filters_and_sorting(seller: Seller, orders: dict, query: str, expected: list) -> None:
    page = page_text(signed_in(seller.user).get(f"/sellers/orders/?{query}"))
    assert _listed(page) == expected


def test_the_date_filter_reads_days_in_the_marketplace_zone(seller: Seller, orders: dict) -> None:
    since = (timezone.now() - timedelta(days=10)).date().isoformat()
    page = page_text(signed_in(seller.user).get(f"/sellers/orders/?since={since}"))
    assert _listed(page) == ["MP-FRESH", "MP-LATE"]


@pytest.mark.parametrize("query", ["", "state=AWAITING_SHIPMENT", "late=on", "sort=ship_by"])
def test_the_csv_export_rows_equal_the_filtered_list(
    seller: Seller, orders: dict, query: str
) -> None:
    client = signed_in(seller.user)
    listed = _listed(page_text(client.get(f"/sellers/orders/?{query}")))

    rows = _exported(client, query)

    assert rows[0][:5] == ["Order", "Placed", "Buyer", "State", "Total"]
    assert [row[0] for row in rows[1:]] == listed
    assert all(row[4] == "29.50" and row[5] == "EUR" for row in rows[1:])


def test_the_csv_marks_late_and_never_starts_a_cell_with_a_formula(
    seller: Seller, orders: dict
) -> None:
    rows = {row[0]: row for row in _exported(signed_in(seller.user), "")[1:]}
    assert rows["MP-LATE"][7] == "yes"
    assert rows["MP-FRESH"][7] == ""
    assert rows["MP-FRESH"][8] == "1"
    assert rows["MP-SHIPPED"][2] == "'=HYPERLINK(1)"
    assert rows["MP-LATE"][1].endswith(" UTC")
