"""The staff orders list: filters (state, placed dates, seller, late, problems), sorting,
the buyer, total and ship-by columns, and a CSV export that holds exactly what the
filter shows (streamed)."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from django.utils import timezone

from marketplace.orders.models import Order, OrderLine, ValidationProblem
from marketplace.templatetags.display import format_money
from tests.marketplace.dashboard.builders import World, build_world
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db

ROW_NUMBER = re.compile(r'href="/dashboard/orders/\d+/">([A-Z]-\d{5})</a>')


@pytest.fixture
def world(staff_user: object) -> World:
    world = build_world(sellers=3, orders=40)
    now = timezone.now()
    # Placed a day apart, newest last, so "Placed" sorts differ from the insertion order;
    # every third order's ship-by date has passed.
    for index, order in enumerate(world.orders):
        Order.objects.filter(pk=order.pk).update(
            purchase_date=now - timedelta(days=40 - index),
            latest_ship_date=now - timedelta(hours=1)
            if index % 3 == 0
            else now + timedelta(days=2),
            customer_full_name=f"Buyer {index:02d}",
        )
    return world


def listed(client: Client, query: str) -> list[str]:
    """Every order number the list shows for ``query``, page after page."""
    numbers: list[str] = []
    page = 1
    while True:
        body = page_text(client.get(f"/dashboard/orders/?{query}&page={page}"))
        numbers += ROW_NUMBER.findall(body)
        if 'rel="next"' not in body:
            return numbers
        page += 1


def exported(client: Client, query: str) -> list[dict[str, str]]:
    response = client.get(f"/dashboard/orders/export.csv?{query}")
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)  # streamed, not built in memory
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()  # type: ignore[arg-type]
    return list(csv.DictReader(io.StringIO(text)))


def test_the_list_shows_buyer_total_ship_by_and_a_late_flag(
    world: World, staff_client: Client
) -> None:
    order = world.orders[39]  # placed last: first on the page; ship-by passed (39 % 3 == 0)
    lines = list(OrderLine.objects.filter(order=order))
    paid = sum(
        (
            line.quantity * line.unit_price
            + line.shipping_price
            + sum((Decimal(t["amount"]) for t in line.taxes), Decimal(0))
            - sum((Decimal(d["amount"]) for d in line.discounts), Decimal(0))
            for line in lines
        ),
        Decimal(0),
    )
    body = page_text(staff_client.get("/dashboard/orders/"))
    first_row = body[body.index("<tbody>") : body.index("</tr>", body.index("<tbody>"))]
    assert order.mp_order_number in first_row
    assert "Buyer 39" in first_row
    assert format_money(paid, "EUR") in first_row  # "€50.00": Babel, the order's currency
    assert "data-late" in first_row
    assert 'id="select-all"' in body
    assert 'name="ids"' in body


def test_placed_dates_come_in_order_both_ways(world: World, staff_client: Client) -> None:
    newest_first = listed(staff_client, "")
    assert newest_first == [o.mp_order_number for o in reversed(world.orders)]
    assert listed(staff_client, "sort=placed") == list(reversed(newest_first))


def test_filters_narrow_the_list_and_the_export_holds_exactly_those_rows(
    world: World, staff_client: Client
) -> None:
    seller = world.sellers[1]
    now = timezone.now()
    Order.objects.filter(pk=world.orders[4].pk).update(state=Order.State.SHIPPED)
    ValidationProblem.objects.filter(order=world.orders[7]).delete()
    date_from = (now - timedelta(days=30)).date().isoformat()
    date_to = (now - timedelta(days=2)).date().isoformat()
    query = (
        f"seller_name={seller.display_name.replace(' ', '+')}&placed_from={date_from}"
        f"&placed_to={date_to}&sort=-ship_by"
    )
    shown = listed(staff_client, query)
    expected = {
        o.mp_order_number
        for o in Order.objects.filter(
            seller=seller,
            purchase_date__date__gte=date_from,
            purchase_date__date__lte=date_to,
        )
    }
    assert shown
    assert set(shown) == expected
    rows = exported(staff_client, query)
    assert [row["order"] for row in rows] == shown  # the same rows, in the same order
    assert {row["seller"] for row in rows} == {seller.display_name}

    late = listed(staff_client, "late=on")
    assert late
    assert all(int(n[2:]) % 3 == 0 for n in late)
    assert world.orders[4].mp_order_number not in late  # shipped: never late
    late_rows = exported(staff_client, "late=on")
    assert [row["order"] for row in late_rows] == late
    assert {row["late"] for row in late_rows} == {"yes"}

    assert world.orders[7].mp_order_number not in listed(staff_client, "problems=on")
    assert listed(staff_client, "state=SHIPPED") == [world.orders[4].mp_order_number]
    assert [r["order"] for r in exported(staff_client, "state=SHIPPED")] == [
        world.orders[4].mp_order_number
    ]


def test_a_buyer_name_cannot_become_a_spreadsheet_formula(
    world: World, staff_client: Client
) -> None:
    Order.objects.filter(pk=world.orders[0].pk).update(customer_full_name="=HYPERLINK(1)")
    rows = exported(staff_client, f"q={world.orders[0].mp_order_number}")
    assert [row["buyer"] for row in rows] == ["'=HYPERLINK(1)"]


def test_the_export_needs_staff(world: World, client: Client) -> None:
    response = client.get("/dashboard/orders/export.csv")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_the_order_page_shows_its_money_in_the_orders_currency(
    world: World, staff_client: Client
) -> None:
    order = world.orders[0]
    lines = list(OrderLine.objects.filter(order=order))
    OrderLine.objects.filter(pk=lines[0].pk).update(
        unit_price=Decimal("1234.50"),
        quantity=2,
        shipping_price=Decimal("4.95"),
        taxes=[{"type": "VAT", "amount": "20.00"}],
        discounts=[{"name": "Autumn", "amount": "10.00", "type": "promotion"}],
    )
    Order.objects.filter(pk=order.pk).update(currency="USD")
    line = OrderLine.objects.get(pk=lines[0].pk)
    others = sum(
        (
            o.quantity * o.unit_price
            + o.shipping_price
            + sum((Decimal(t["amount"]) for t in o.taxes), Decimal(0))
            - sum((Decimal(d["amount"]) for d in o.discounts), Decimal(0))
            for o in lines[1:]
        ),
        Decimal(0),
    )
    body = page_text(staff_client.get(f"/dashboard/orders/{order.id}/"))
    lines_table = body[body.index('id="lines"') : body.index('id="order-money"')]
    assert "$1,234.50" in lines_table  # the unit price
    assert "$20.00" in lines_table  # the line's tax
    assert "$4.95" in lines_table  # its shipping
    assert "\u2212$10.00" in lines_table  # its discount, with a minus sign
    paid = 2 * line.unit_price + Decimal("20.00") + Decimal("4.95") - Decimal("10.00")
    assert format_money(paid, "USD") in lines_table
    money = body[body.index('id="order-money"') :]
    assert f'id="order-total"><strong>{format_money(paid + others, "USD")}<' in money
    assert "nothing yet" in money  # no refund in the ledger
