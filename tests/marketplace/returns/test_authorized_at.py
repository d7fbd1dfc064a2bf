"""``Return.authorized_at``: stamped by the first pull that sees the return leave
AWAITING_AUTHORIZATION for AUTHORIZED, REFUNDED or COMPLETED, never moved afterwards, and
never given to a refused return or to one already past that state before the field existed
(the sellers' authorization wait, marketplace/performance)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import Return
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.pull import seller_after_sale_pull
from tests.marketplace.returns.conftest import FakeOrderSource, shipped_order

pytestmark = pytest.mark.django_db


def _placed(number: str = "R1") -> tuple[str, int]:
    """A return placed through intake and pushed: (its order's number, the seller's id)."""
    order = shipped_order()
    data = ReturnIn.model_validate(
        {
            "mp_return_number": number,
            "reason": "x",
            "return_lines": [{"mp_line_number": "1", "quantity": 1}],
        }
    )
    return_create(mp_order_number=order.mp_order_number, data=data)
    return_steps_drain()
    return order.mp_order_number, order.seller_id


def test_the_first_authorization_seen_is_stamped_once_and_kept(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given a return awaiting the seller's authorization
    number, seller_id = _placed()
    seller_after_sale_pull(seller_id=seller_id)
    assert Return.objects.get().authorized_at is None
    # When the seller authorizes it and a pull sees it
    fake_platform.set_return(number, "R1", "AUTHORIZED", rma="RMA-1")
    before = timezone.now()
    seller_after_sale_pull(seller_id=seller_id)
    # Then authorized_at is the time of that pull
    stamped = Return.objects.get().authorized_at
    assert stamped is not None
    assert before <= stamped <= timezone.now()
    # And listed again, changed (a new RMA), refunded, decided and completed, it stays
    fake_platform.set_return(number, "R1", "AUTHORIZED", rma="RMA-2")
    seller_after_sale_pull(seller_id=seller_id)
    fake_platform.set_return(number, "R1", "REFUNDED")
    fake_platform.return_refunds[(number, "R1")] = [
        {"mp_return_line_number": "1", "principal_refund_amount": 10, "shipping_refund_amount": 0}
    ]
    seller_after_sale_pull(seller_id=seller_id)
    return_steps_drain()  # our "complete" answered: COMPLETED
    ret = Return.objects.get()
    assert (ret.status, ret.decision, ret.rma) == ("COMPLETED", "accepted", "RMA-2")
    assert ret.authorized_at == stamped


def test_a_return_refunded_straight_from_awaiting_authorization_is_stamped(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # A fully preauthorized return: the seller refunds it without authorizing first.
    number, seller_id = _placed()
    fake_platform.set_return(number, "R1", "REFUNDED")
    fake_platform.return_refunds[(number, "R1")] = [
        {"mp_return_line_number": "1", "principal_refund_amount": 10, "shipping_refund_amount": 0}
    ]
    seller_after_sale_pull(seller_id=seller_id)
    ret = Return.objects.get()
    assert ret.status == "REFUNDED"
    assert ret.authorized_at is not None


def test_a_refused_return_gets_no_authorization_time(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    number, seller_id = _placed()
    fake_platform.set_return(number, "R1", "REJECTED", notes="used")
    seller_after_sale_pull(seller_id=seller_id)
    ret = Return.objects.get()
    assert (ret.status, ret.notes) == ("REJECTED", "used")
    assert ret.authorized_at is None


def test_a_state_we_do_not_know_is_no_authorization(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    number, seller_id = _placed()
    fake_platform.set_return(number, "R1", "ON_HOLD_BY_CARRIER")
    seller_after_sale_pull(seller_id=seller_id)
    ret = Return.objects.get()
    assert ret.status == "ON_HOLD_BY_CARRIER"
    assert ret.authorized_at is None


def test_a_return_authorized_before_the_field_existed_is_not_stamped_with_today(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given a return stored AUTHORIZED with no authorized_at (the rows before the
    # migration: their wait is unknown, not "until the next pull")
    number, seller_id = _placed()
    fake_platform.set_return(number, "R1", "AUTHORIZED", rma="RMA-1")
    Return.objects.update(status="AUTHORIZED")
    # When a pull sees it authorized, then refunded
    seller_after_sale_pull(seller_id=seller_id)
    fake_platform.set_return(number, "R1", "REFUNDED")
    seller_after_sale_pull(seller_id=seller_id)
    # Then it stays without an authorization time
    ret = Return.objects.get()
    assert (ret.status, ret.rma) == ("REFUNDED", "RMA-1")
    assert ret.authorized_at is None
