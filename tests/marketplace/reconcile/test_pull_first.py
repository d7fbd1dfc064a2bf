"""A pass first runs one ordinary pull (``RECONCILE_PULL_FIRST``): a change the next pull
would read anyway (a shipment the seller made since the last pull) is read, not reported
as a finding; drift no cursor shows is still found."""

from __future__ import annotations

from typing import Any

import pytest

from marketplace.orders.models import Order
from marketplace.orders.services.push import order_push
from marketplace.reconcile import kinds
from marketplace.reconcile.models import RunTrigger
from marketplace.reconcile.seller_pass import seller_reconcile
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _pull_first(settings: Any) -> None:
    settings.RECONCILE_PULL_FIRST = True


def test_a_shipment_the_pull_had_not_read_yet_is_read_not_reported(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given an order the seller shipped at the platform since our last pull
    order = make_order("MP-LAG")
    assert order_push(order_id=order.id) == "synced"
    platform.sandbox.ship("MP-LAG")
    assert Order.objects.get(pk=order.pk).fulfillment_digest == ""
    # When a pass runs
    run = seller_reconcile(seller_id=connected_seller.id, trigger=RunTrigger.COMMAND)
    # Then its pull read the shipment first: nothing differs, nothing is reported
    assert (run.error, run.findings_count) == ("", 0)
    assert Order.objects.get(pk=order.pk).fulfillment_digest != ""


def test_drift_no_cursor_shows_is_still_found(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given two orders pushed, one of which the platform then loses (a support action:
    # no update time moves, so no pull lists it)
    for number in ("MP-GONE", "MP-STAYS"):
        assert order_push(order_id=make_order(number).id) == "synced"
    platform.sandbox.control("POST", "/orders/MP-GONE/drift", {"kind": "forget_order"})
    # When a pass runs, its pull first
    run = seller_reconcile(seller_id=connected_seller.id, trigger=RunTrigger.COMMAND)
    # Then the loss is found and the order sent again
    found = list(run.findings.values_list("kind", "object_key", "action"))
    assert (run.error, found) == ("", [(kinds.ORDER_MISSING, "MP-GONE", "resent")])
