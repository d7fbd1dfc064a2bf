"""Issue 30, point 6: erasure of one buyer on request, and the export of what we hold.

``manage.py erase_buyer --email`` and the staff page erase the buyer everywhere at once;
an open order keeps what the platform needs and is erased as soon as it closes; the
erasure is recorded without the e-mail; ``export_buyer`` prints everything as JSON.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Sum
from django.test import Client

from marketplace.orders.models import Order
from marketplace.platform.models import PlatformCall
from marketplace.privacy.erasure import email_hash
from marketplace.privacy.models import BuyerErasure, ErasedOrder, PendingErasure
from marketplace.privacy.retention import pending_erasures_apply
from marketplace.returns.models import RefundLedgerEntry, RefundStatus
from tests.marketplace.privacy.builders import EMAIL, NAME, buyer_order
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db

URL = "/dashboard/privacy/erase/"


def _run(command: str, **options: Any) -> str:
    out = io.StringIO()
    call_command(command, stdout=out, **options)
    return out.getvalue()


def _words(html: str) -> str:
    """The page's text without tags, runs of white space as one space."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split()).replace(" )", ")")


def _holds_buyer(order: Order) -> bool:
    order.refresh_from_db()
    return order.customer_email == EMAIL and order.customer_full_name == NAME


def test_erase_buyer_erases_closed_orders_now_and_open_ones_when_they_close() -> None:
    closed = buyer_order(refund=RefundStatus.COMPLETE)
    still_open = buyer_order(state=Order.State.AWAITING_SHIPMENT, with_return=None)
    other = buyer_order(email="someone.else@example.net")
    PlatformCall.objects.create(order_number=closed.mp_order_number, method="PUT", path="/a")
    # A listing (no order number) of the buyer's seller, stored before the scrub knew a key.
    PlatformCall.objects.create(
        seller=closed.seller, method="GET", path="/returns", response_excerpt=f"{EMAIL}!"
    )
    # Another seller's row is not read, and one that does not quote the buyer stays.
    PlatformCall.objects.create(seller=other.seller, method="GET", path="/returns")
    PlatformCall.objects.create(seller=closed.seller, method="GET", path="/refunds")
    ledger = RefundLedgerEntry.objects.aggregate(total=Sum("amount"))["total"]

    printed = _run("erase_buyer", email=EMAIL.upper(), by="dpo@marketplace")

    assert "Matching: 2 order(s) (1 closed, 1 open), 1 return(s)." in printed
    assert "1 order(s) and 1 return(s) erased, 2 call log row(s) deleted." in printed
    assert "1 open order(s) keep what the platform still needs" in printed
    assert not _holds_buyer(closed)
    assert _holds_buyer(still_open)  # the platform still needs the address
    other.refresh_from_db()
    assert other.customer_full_name == NAME  # another buyer is untouched
    assert sorted(PlatformCall.objects.values_list("path", flat=True)) == ["/refunds", "/returns"]
    assert RefundLedgerEntry.objects.aggregate(total=Sum("amount"))["total"] == ledger

    erasure = BuyerErasure.objects.get()
    assert (erasure.requested_by, erasure.orders_erased, erasure.orders_pending) == (
        "dpo@marketplace",
        1,
        1,
    )
    assert erasure.email_hash == email_hash(EMAIL)
    assert EMAIL not in erasure.email_hash
    assert erasure.completed_at is None
    assert PendingErasure.objects.get().order_id == still_open.pk

    # Not closed yet: the job leaves it. Once shipped, it goes at once (no retention wait).
    assert pending_erasures_apply().orders == 0
    Order.objects.filter(pk=still_open.pk).update(state=Order.State.SHIPPED)
    assert pending_erasures_apply().orders == 1
    assert not _holds_buyer(still_open)
    assert not PendingErasure.objects.exists()
    erasure.refresh_from_db()
    assert erasure.completed_at is not None
    assert ErasedOrder.objects.get(order=still_open).why == "request"


def test_erase_buyer_dry_run_changes_nothing_and_a_bad_address_is_refused() -> None:
    order = buyer_order()
    assert "Matching: 1 order(s)" in _run("erase_buyer", email=EMAIL, dry_run=True)
    assert _holds_buyer(order)
    assert not BuyerErasure.objects.exists()
    with pytest.raises(CommandError, match="not an e-mail address"):
        _run("erase_buyer", email="not-an-address")


def test_export_buyer_prints_everything_held_as_json() -> None:
    order = buyer_order(refund=RefundStatus.COMPLETE)
    buyer_order(email="someone.else@example.net")
    PlatformCall.objects.create(order_number=order.mp_order_number, method="PUT", path="/o")

    data = json.loads(_run("export_buyer", email=EMAIL))

    assert data["email"] == EMAIL
    [exported] = data["orders"]
    assert exported["mp_order_number"] == order.mp_order_number
    assert exported["customer_full_name"] == NAME
    assert exported["lines"][0]["sku"] == "SKU-1"
    assert exported["returns"][0]["mp_return_number"] == "R-1"
    assert exported["seller_refunds"][0]["status"] == "COMPLETE"
    assert exported["refunds_owed"][0]["amount"] == "14.83"
    assert [c["path"] for c in data["call_log"]] == ["/o"]
    assert data["erasures"] == []

    _run("erase_buyer", email=EMAIL)
    after = json.loads(_run("export_buyer", email=EMAIL))
    assert after["orders"] == []
    assert len(after["erasures"]) == 1


def test_the_staff_page_finds_confirms_and_erases(staff_client: Client, staff_user: Any) -> None:
    order = buyer_order()
    assert "Erase a buyer" in page_text(staff_client.get(URL))

    preview = _words(page_text(staff_client.post(URL, {"email": EMAIL})))
    assert "matches 1 order(s) (1 closed, 0 still open) and 1 return(s)" in preview
    assert _holds_buyer(order)

    done = staff_client.post(URL, {"email": EMAIL, "confirmed": "yes"})
    text = _words(page_text(done))
    assert "1 order(s) and 1 return(s) erased" in text
    assert EMAIL not in done.content.decode()
    assert not _holds_buyer(order)
    assert BuyerErasure.objects.get().requested_by == staff_user.username


def test_the_staff_page_is_for_staff_only(seller_client: Client) -> None:
    order = buyer_order()
    assert seller_client.get(URL).status_code == 403
    assert seller_client.post(URL, {"email": EMAIL, "confirmed": "yes"}).status_code == 403
    assert Client().get(URL).status_code == 302
    assert _holds_buyer(order)


def test_the_staff_page_refuses_a_bad_address(staff_client: Client) -> None:
    response = staff_client.post(URL, {"email": "nope", "confirmed": "yes"})
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()
    assert not BuyerErasure.objects.exists()


def test_the_admin_shows_erasures_read_only(admin_client: Client) -> None:
    buyer_order()
    _run("erase_buyer", email=EMAIL, by="dpo@marketplace")
    erasure = BuyerErasure.objects.get()
    listing = page_text(admin_client.get("/admin/privacy/buyererasure/"))
    assert "dpo@marketplace" in listing
    detail = page_text(admin_client.get(f"/admin/privacy/buyererasure/{erasure.pk}/change/"))
    assert erasure.email_hash not in detail
    assert admin_client.get("/admin/privacy/buyererasure/add/").status_code == 403
    assert admin_client.post(f"/admin/privacy/buyererasure/{erasure.pk}/delete/").status_code == 403
    assert BuyerErasure.objects.filter(pk=erasure.pk).exists()
