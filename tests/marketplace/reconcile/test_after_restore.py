"""The after-restore pass, one case at a time, over real HTTP against the sandbox (its
drift control call makes the platform move as if the work had been done before a restore
lost it): a lost order is rebuilt with its shipments and not pushed again; a refund or a
return the platform shows complete is recorded in the ledger once, from the platform's
record, with no platform call; what the ledger holds with other amounts, or what our
checks refuse, is left to staff with nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.test import Client

from marketplace.orders.models import Order, OrderSync, Shipment
from marketplace.reconcile.after_restore import seller_reconcile_after_restore
from marketplace.reconcile.models import Finding, FindingAction
from marketplace.returns.models import Decision, RefundLedgerEntry, Return, SellerRefund
from sellers.models import Seller
from tests.marketplace.reconcile.driving import (
    drive,
    intake_return,
    placed_and_shipped,
    seller_refunds_line,
)
from tests.support.app_fixtures import Platform

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def _findings(seller: Seller) -> list[tuple[str, str, str]]:
    run = seller_reconcile_after_restore(seller_id=seller.pk, trigger="command")
    assert run.error == ""
    return sorted(Finding.objects.filter(run=run).values_list("kind", "object_key", "action"))


def _calls(platform: Platform, method: str, fragment: str) -> int:
    return sum(
        1
        for r in platform.sandbox.requests_log(limit=1000)
        if r.get("method") == method and fragment in str(r.get("path"))
    )


def test_a_lost_order_is_rebuilt_with_its_shipments_and_not_pushed_again(
    platform: Platform, connected_seller: Seller, api: Client
) -> None:
    placed_and_shipped(api, connected_seller, platform, "MP-L1")
    puts = _calls(platform, "PUT", "/orders/MP-L1")
    assert puts == 2  # placed, then SHIPPED
    # The restore lost the order (it never paid anything back, so it can go).
    Order.objects.filter(mp_order_number="MP-L1").delete()

    assert _findings(connected_seller) == [("restore_order_lost", "MP-L1", FindingAction.RECORDED)]

    order = Order.objects.get(mp_order_number="MP-L1")
    theirs = platform.sandbox.order("MP-L1")
    assert order.state == theirs["marketplace_state"] == "SHIPPED"
    assert order.customer_full_name == "Ada Lovelace"
    assert sorted(order.lines.values_list("mp_line_number", "quantity", "unit_price")) == [
        ("1", 3, Decimal("12.50")),
        ("2", 1, Decimal("9.99")),
    ]
    assert sum(Shipment.objects.filter(line__order=order).values_list("quantity", flat=True)) == 4
    sync = OrderSync.objects.get(order=order)
    assert (sync.status, sync.pushed_version, sync.desired_version) == ("synced", 1, 1)
    drive(connected_seller, rounds=1)
    assert _calls(platform, "PUT", "/orders/MP-L1") == puts
    assert _findings(connected_seller) == []


def test_a_refund_completed_there_is_recorded_once_from_its_record_without_a_call(
    platform: Platform, connected_seller: Seller, api: Client
) -> None:
    placed_and_shipped(api, connected_seller, platform, "MP-R1")
    # Posted and completed at the platform while our database (restored) never saw it.
    refund_id = seller_refunds_line(platform, "MP-R1", "1", "4.00")
    platform.sandbox.control(
        "POST", "/orders/MP-R1/drift", {"kind": "refund_status", "refund_id": int(refund_id)}
    )

    assert _findings(connected_seller) == [
        ("restore_refund_unrecorded", f"MP-R1/refund {refund_id}", FindingAction.RECORDED)
    ]
    entry = RefundLedgerEntry.objects.get()
    assert (entry.payment_key, entry.amount) == (f"refund:MP-R1:{refund_id}:1", Decimal("4.00"))
    refund = SellerRefund.objects.get(refund_id=refund_id)
    assert (refund.decision, refund.status, refund.recorded_after_restore) == (
        Decision.ACCEPTED,
        "COMPLETE",
        True,
    )
    assert not refund.steps.exists()
    drive(connected_seller, rounds=1)
    assert _calls(platform, "POST", f"/refunds/{refund_id}/complete") == 0
    # Again: nothing new, nothing written twice.
    assert _findings(connected_seller) == []
    assert RefundLedgerEntry.objects.count() == 1


def test_a_return_completed_there_is_recorded_once(
    platform: Platform, connected_seller: Seller, api: Client
) -> None:
    placed_and_shipped(api, connected_seller, platform, "MP-T1")
    intake_return(api, "MP-T1", "RET-T", "2")
    drive(connected_seller, rounds=1)
    platform.sandbox.control(
        "POST",
        "/orders/MP-T1/drift",
        {
            "kind": "return_status",
            "mp_return_number": "RET-T",
            "status": "COMPLETED",
            "refund_lines": [
                {
                    "mp_return_line_number": "1",
                    "principal_refund_amount": "9.99",
                    "shipping_refund_amount": 0,
                }
            ],
        },
    )

    assert _findings(connected_seller) == [
        ("restore_return_unrecorded", "MP-T1/RET-T", FindingAction.RECORDED)
    ]
    entry = RefundLedgerEntry.objects.get()
    assert (entry.payment_key, entry.amount) == ("return:MP-T1:RET-T:2", Decimal("9.99"))
    ret = Return.objects.get(mp_return_number="RET-T")
    assert (ret.status, ret.recorded_after_restore) == ("COMPLETED", True)
    assert _findings(connected_seller) == []


def test_amounts_that_disagree_and_refunds_our_checks_refuse_are_left_to_staff(
    platform: Platform, connected_seller: Seller, api: Client
) -> None:
    placed_and_shipped(api, connected_seller, platform, "MP-S1")
    paid = seller_refunds_line(platform, "MP-S1", "1", "5.00")
    too_much = seller_refunds_line(platform, "MP-S1", "2", "99.00")
    drive(connected_seller)
    assert SellerRefund.objects.get(refund_id=too_much).decision == Decision.REFUSED
    # Elsewhere: the paid refund's amount changed, the refused one completed.
    sandbox = platform.sandbox
    sandbox.control(
        "POST",
        "/orders/MP-S1/drift",
        {"kind": "refund_amounts", "refund_id": int(paid), "item_refund": "7.25"},
    )
    sandbox.control(
        "POST", "/orders/MP-S1/drift", {"kind": "refund_status", "refund_id": int(too_much)}
    )

    assert _findings(connected_seller) == [
        ("restore_ledger_differs", f"MP-S1/refund {paid}", FindingAction.STAFF),
        ("restore_refund_unrecorded", f"MP-S1/refund {too_much}", FindingAction.STAFF),
    ]
    assert list(RefundLedgerEntry.objects.values_list("payment_key", "amount")) == [
        (f"refund:MP-S1:{paid}:1", Decimal("5.00"))
    ]
    refused = SellerRefund.objects.get(refund_id=too_much)
    assert (refused.decision, refused.version, refused.recorded_after_restore) == (
        Decision.REFUSED,
        1,
        False,
    )
