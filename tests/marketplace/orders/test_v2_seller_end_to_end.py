"""End to end over real HTTP with three processes besides this one: the sandbox, the
simulated seller (``python -m sandbox.seller_sim``, speaking only get_token and v2) and the
marketplace's Celery worker. An order placed at the marketplace is pushed, imported at
the platform, confirmed and shipped by the seller's system through v2, pulled back and
settled; nothing shortcuts the sandbox's tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.orders.models import (
    LineCancellation,
    Order,
    OrderSync,
    Shipment,
    SyncEvent,
    ValidationProblem,
)
from marketplace.sync.fan_out import sellers_pull_fan_out
from marketplace.sync.models import SellerSync
from tests.marketplace.conftest import order_body, wait_for
from tests.sandbox.orders_v2.v2_client import SellerApi
from tests.support.app_fixtures import PLATFORM_SELLER, Platform
from tests.support.seller_sim_process import SellerSimProcess

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
URL = "/api/intake/orders"
API_USER, API_PASSWORD, API_CLIENT = "alice-shop-erp", "alice-shop-erp-pass", "770001"


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


@pytest.fixture
def v2_seller(platform: Platform) -> Platform:
    """The platform seller's order-API user, imported every 0.3 s."""
    platform.sandbox.create_api_user(PLATFORM_SELLER, API_USER, API_PASSWORD, API_CLIENT)
    platform.sandbox.v2_settings(PLATFORM_SELLER, import_interval_seconds=0.3)
    return platform


def simulator(platform: Platform, **options: Any) -> SellerSimProcess:
    return SellerSimProcess(
        platform.sandbox,
        seller=PLATFORM_SELLER,
        api_user=API_USER,
        password=API_PASSWORD,
        client_id=API_CLIENT,
        seed=7,
        **options,
    )


def place(api: Client, number: str) -> None:
    body = json.dumps(order_body(number))
    response = api.post(URL, data=body, content_type="application/json")
    assert response.status_code in (200, 201), response.content


def fan_out_now() -> list[int]:
    """Beat's fan-out, with every scheduled pull made due (as if an interval had passed)."""
    SellerSync.objects.exclude(next_pull_at=None).update(next_pull_at=timezone.now())
    return sellers_pull_fan_out()


def settled(number: str) -> bool:
    """Pull (beat's job here) and tell whether the order is final and synced."""
    fan_out_now()
    order = Order.objects.filter(mp_order_number=number).select_related("sync").first()
    return bool(
        order
        and order.state in ("SHIPPED", "CANCELLED")
        and order.sync.status == OrderSync.Status.SYNCED
    )


def test_an_order_is_confirmed_shipped_in_two_packages_and_settled(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    with simulator(v2_seller, ship_delay=0.5, packages=2) as sim:
        place(api, "MP-V2-1")
        wait_for(
            lambda: settled("MP-V2-1"), timeout=40, what="SHIPPED and synced", explain=sim.log_text
        )
        log = sim.log_text()
    assert "confirmed order" in log
    order = Order.objects.get(mp_order_number="MP-V2-1")
    assert order.state == "SHIPPED"
    shipments = list(Shipment.objects.filter(line__order=order))
    numbers = {s.tracking_number for s in shipments}
    assert len(numbers) == 2, shipments  # both packages, each with its tracking number
    assert all(s.tracking_url and s.carrier for s in shipments)
    assert sum(s.quantity for s in shipments) == 4
    # The seller sees both packages in the portal.
    portal = Client()
    portal.force_login(connected_seller.user)
    page = portal.get(f"/sellers/orders/{order.id}/").content.decode()
    assert all(number in page for number in numbers)
    # At the platform: confirmed with the seller's own number, two packages released.
    v2 = v2_seller.sandbox.v2_order("MP-V2-1")
    assert v2["merchant_order_number"] == f"{PLATFORM_SELLER}-{v2['id']}"
    assert [p["released"] for p in v2["fulfillments"]] == [True, True]
    kinds = [e["kind"] for e in v2["events"]]
    assert kinds[:2] == ["new_order", "confirmed"]
    assert kinds.count("fulfilled") == 2
    assert v2_seller.order("MP-V2-1")["marketplace_state"] == "SHIPPED"


def test_an_order_with_some_units_cancelled_ends_shipped_with_them_cancelled(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    with simulator(v2_seller, ship_delay=0.5, cancel_rate=1.0) as sim:
        place(api, "MP-V2-2")
        wait_for(
            lambda: settled("MP-V2-2"), timeout=40, what="SHIPPED and synced", explain=sim.log_text
        )
    order = Order.objects.get(mp_order_number="MP-V2-2")
    assert order.state == "SHIPPED"
    cancelled = sum(c.quantity for c in LineCancellation.objects.filter(line__order=order))
    shipped = sum(s.quantity for s in Shipment.objects.filter(line__order=order))
    assert cancelled >= 1
    assert shipped >= 1
    assert shipped + cancelled == 4
    v2 = v2_seller.sandbox.v2_order("MP-V2-2")
    assert sum(line["cancelled"] for line in v2["lines"]) == cancelled


def test_an_order_cancelled_by_the_marketplace_before_shipment_is_never_shipped(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    with simulator(v2_seller, ship_delay=6) as sim:
        place(api, "MP-V2-3")
        sim.wait_for_log("(MP-V2-3) ready", timeout=30)
        response = api.post(f"{URL}/MP-V2-3/cancel", data="{}", content_type="application/json")
        assert response.status_code in (200, 201), response.content
        sim.wait_for_log("(MP-V2-3) cancelled by the marketplace: not shipping it", timeout=30)
        wait_for(lambda: settled("MP-V2-3"), timeout=30, what="CANCELLED and synced")
        # Past the shipping delay: still nothing shipped.
        sim.wait_for_log("MP-V2-3", timeout=1)
        wait_for(lambda: "shipped package" not in sim.log_text() and _delay_passed(sim), timeout=15)
    v2 = v2_seller.sandbox.v2_order("MP-V2-3")
    assert v2["fulfillments"] == []
    assert v2["normalized_marketplace_state"] == "CANCELLED"
    order = Order.objects.get(mp_order_number="MP-V2-3")
    assert order.state == "CANCELLED"
    assert not Shipment.objects.filter(line__order=order).exists()
    assert v2_seller.order("MP-V2-3")["fulfillments"]["fulfillments"][0]["shipments"] == []


def _delay_passed(sim: SellerSimProcess) -> bool:
    """True once the 6 s shipping delay after 'ready' has passed (read from the log's times)."""

    ready = next(line for line in sim.log_text().splitlines() if "(MP-V2-3) ready" in line)
    at = datetime.strptime(ready[:23], "%Y-%m-%d %H:%M:%S,%f")
    return (datetime.now() - at).total_seconds() > 7.5


# -- a bad shipment corrected (or deleted) through v2 -------------------------------------

BAD_UPS, GOOD_UPS, FIXED_UPS = "1Z12-BAD", "1Z999AA10123456784", "1ZFIXED0000000001A"


def _erp(platform: Platform) -> SellerApi:
    """The seller's own system speaking v2 (here the test, as a person would by hand)."""
    return SellerApi(platform.sandbox, API_USER, API_PASSWORD, API_CLIENT).login()


def _imported(erp: SellerApi, number: str) -> dict:
    found: list[dict] = []

    def imported() -> bool:
        found[:] = erp.orders(marketplace_order_number=number)
        return bool(found)

    wait_for(imported, timeout=30, what=f"{number} imported into v2")
    return found[0]


def _package(line_id: str, quantity: int, tracking_number: str) -> dict:
    return {
        "fulfillment_type": "shipment",
        "fulfillment_lines": [{"line_id": line_id, "quantity": quantity}],
        "shipment": {
            "shipped_date": datetime.now(UTC).replace(microsecond=0).isoformat(),
            "carrier": "UPS",
            "tracking_number": tracking_number,
        },
    }


def _reported_problem(number: str) -> ValidationProblem | None:
    fan_out_now()
    return ValidationProblem.objects.filter(
        order__mp_order_number=number, reported_at__isnull=False
    ).first()


def _portal_page(seller: Any, order: Order) -> str:
    portal = Client()
    portal.force_login(seller.user)
    return (
        portal.get(f"/sellers/orders/{order.id}/").content.decode()
        + portal.get("/sellers/").content.decode()
    )


def _bad_shipment_reported(v2_seller: Platform, connected_seller: Any, api: Client, number: str):
    """Placed, imported, confirmed; line 1 shipped properly, line 2 with a bad tracking
    number; pulled: the problem is reported once and the portal shows it. Returns the v2
    order, the bad package and the ERP."""
    erp = _erp(v2_seller)
    place(api, number)
    v2 = _imported(erp, number)
    red, blue = (line["id"] for line in v2["order_lines"])  # 3 red, 1 blue
    erp.ok("POST", f"/orders/{v2['id']}/confirm", json={})
    path = f"/orders/{v2['id']}/fulfillments"
    erp.ok("POST", path, 201, json=_package(red, 3, GOOD_UPS))
    bad = erp.ok("POST", path, 201, json=_package(blue, 1, BAD_UPS))
    problem = wait_for(
        lambda: _reported_problem(number), timeout=30, interval=0.3, what="the problem reported"
    )
    assert problem.code == "INVALID_TRACKING_NUMBER"
    assert problem.mp_line_number == "2"
    order = Order.objects.get(mp_order_number=number)
    assert order.state == "AWAITING_SHIPMENT"  # held while the problem is open
    assert [e["code"] for e in v2_seller.order(number)["errors"]] == ["INVALID_TRACKING_NUMBER"]
    page = _portal_page(connected_seller, order)
    assert 'data-code="INVALID_TRACKING_NUMBER"' in page
    assert BAD_UPS in page
    return v2, bad, erp, blue


def _closed(v2_seller: Platform, connected_seller: Any, number: str, tracking: set[str]) -> None:
    """After the correction: the stored shipments are the platform's current ones, the
    problem is resolved (reported once, never again), the portal no longer shows it, and
    the order settled and went out SHIPPED."""
    wait_for(lambda: settled(number), timeout=40, what="SHIPPED and synced")
    order = Order.objects.get(mp_order_number=number)
    shipments = list(Shipment.objects.filter(line__order=order))
    assert {s.tracking_number for s in shipments} == tracking
    assert sum(s.quantity for s in shipments) == 4
    (problem,) = ValidationProblem.objects.filter(order=order)
    assert problem.resolved_at is not None
    assert len(v2_seller.order(number)["errors"]) == 1  # reported once
    kinds = list(SyncEvent.objects.filter(order=order).values_list("kind", flat=True))
    assert kinds.count(SyncEvent.Kind.PROBLEM_REPORTED) == 1
    assert kinds.count(SyncEvent.Kind.PROBLEM_RESOLVED) == 1
    assert kinds.count(SyncEvent.Kind.SETTLED) == 1
    page = _portal_page(connected_seller, order)
    assert 'data-code="INVALID_TRACKING_NUMBER"' not in page
    assert BAD_UPS not in page
    assert all(number in page for number in tracking)
    assert v2_seller.order(number)["marketplace_state"] == "SHIPPED"
    # Pulling again changes nothing: no second report, no second settlement.
    fan_out_now()
    assert len(v2_seller.order(number)["errors"]) == 1
    assert SyncEvent.objects.filter(order=order, kind=SyncEvent.Kind.SETTLED).count() == 1


def test_a_bad_shipment_corrected_through_v2_closes_the_problem_and_the_order_settles(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    v2, bad, erp, blue = _bad_shipment_reported(v2_seller, connected_seller, api, "MP-V2-FIX")
    erp.ok("PUT", f"/orders/{v2['id']}/fulfillments/{bad['id']}", json=_package(blue, 1, FIXED_UPS))
    _closed(v2_seller, connected_seller, "MP-V2-FIX", {GOOD_UPS, FIXED_UPS})


def test_a_bad_package_deleted_through_v2_is_removed_and_its_replacement_settles_the_order(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    v2, bad, erp, blue = _bad_shipment_reported(v2_seller, connected_seller, api, "MP-V2-DEL")
    erp.ok("DELETE", f"/orders/{v2['id']}/fulfillments/{bad['id']}")

    def removed() -> bool:
        fan_out_now()
        return not Shipment.objects.filter(
            line__order__mp_order_number="MP-V2-DEL", tracking_number=BAD_UPS
        ).exists()

    wait_for(removed, timeout=30, interval=0.3, what="the deleted package removed")
    order = Order.objects.get(mp_order_number="MP-V2-DEL")
    assert ValidationProblem.objects.get(order=order).resolved_at is not None
    assert order.state == "AWAITING_SHIPMENT"  # line 2 is open again: not settled
    assert 'data-code="INVALID_TRACKING_NUMBER"' not in _portal_page(connected_seller, order)
    erp.ok("POST", f"/orders/{v2['id']}/fulfillments", 201, json=_package(blue, 1, FIXED_UPS))
    _closed(v2_seller, connected_seller, "MP-V2-DEL", {GOOD_UPS, FIXED_UPS})
