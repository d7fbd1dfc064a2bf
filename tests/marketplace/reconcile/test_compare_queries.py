"""The comparison step of a pass reads our ledger totals and steps once for all returns
and refunds in scope: its number of queries does not grow with them (a seller with many
open returns costs the same few queries as one with two). Built directly in the
database, with the platform's side as a pass would have read it (no sandbox needed)."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from marketplace.reconcile.models import ReconcileRun, RunTrigger
from marketplace.reconcile.pass_state import PassState
from marketplace.reconcile.platform_reads import PlatformSide
from marketplace.reconcile.scope import Scope
from marketplace.reconcile.seller_pass import scope_compare
from marketplace.returns.models import (
    PlatformStep,
    RefundLedgerEntry,
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
    StepKind,
    StepStatus,
)
from marketplace.returns.services.refund_versions import lines_digest
from sellers.models import Seller
from tests.support.factories import OrderFactory

pytestmark = pytest.mark.django_db


def _order_with_money(seller: Seller, side: PlatformSide, n: int) -> str:
    """An order with a completed return and a seller refund, both paid by our ledger. Even
    ``n``: the platform shows both done (the return's ``complete`` step is looked up); odd:
    the platform does not list the return (its push step is looked up) and shows the
    refund still CREATED while our ``complete`` call is on its way. Nothing to find."""
    order = OrderFactory(seller=seller, mp_order_number=f"MP-Q{seller.pk}-{n}", lines=1)
    line = order.lines.get()
    ret = Return.objects.create(
        order=order,
        seller=seller,
        mp_return_number="R-1",
        reason="arrived broken",
        request_date=date.today(),
        respond_date=date.today() + timedelta(days=14),
        intake_fingerprint=hashlib.sha256(f"{seller.pk}-{n}".encode()).hexdigest(),
        status=ReturnStatus.COMPLETED,
    )
    entry: dict[str, Any] = {"mp_order_number": order.mp_order_number, "merchant_refund_lines": []}
    refund = SellerRefund.objects.create(
        seller=seller,
        order=order,
        refund_id=f"9{seller.pk}0{n}",
        status=RefundStatus.COMPLETE,
        lines_digest=lines_digest(entry),
    )
    for source, key in ((ret, "return"), (refund, "refund")):
        RefundLedgerEntry.objects.create(
            order=order,
            order_line=line,
            return_request=source if key == "return" else None,
            refund=source if key == "refund" else None,
            currency="EUR",
            amount=Decimal("10.00"),
            payment_key=f"{key}:{order.mp_order_number}:1",
        )
    if n % 2 == 0:
        side.returns[(order.mp_order_number, "R-1")] = {"status": ReturnStatus.REFUNDED}
        side.refunds[refund.refund_id] = {**entry, "status": RefundStatus.COMPLETE}
    else:
        PlatformStep.objects.create(
            kind=StepKind.PUSH_RETURN, seller=seller, return_request=ret, next_attempt_at=None
        )
        PlatformStep.objects.create(
            kind=StepKind.COMPLETE_REFUND,
            seller=seller,
            refund=refund,
            status=StepStatus.PENDING,
            next_attempt_at=None,
        )
        side.refunds[refund.refund_id] = {**entry, "status": RefundStatus.CREATED}
    return order.mp_order_number


def _compare_queries(seller: Seller, count: int) -> int:
    side = PlatformSide()
    numbers = [_order_with_money(seller, side, n) for n in range(count)]
    # Orders are compared elsewhere (``compare_orders``): only returns and refunds here.
    scope = Scope(return_orders=numbers, refund_orders=numbers, open_count=count)
    run = ReconcileRun.objects.create(seller=seller, trigger=RunTrigger.COMMAND)
    state = PassState(run=run, side=side)
    with CaptureQueriesContext(connection) as queries:
        scope_compare(state, scope)
    assert state.object_errors == []
    assert state.findings == []
    assert state.compared == {"returns": count, "refunds": count}
    return len(queries.captured_queries)


def test_the_compare_step_costs_the_same_queries_for_2_or_6_returns_and_refunds(
    seller: Seller, other_seller: Seller
) -> None:
    small = _compare_queries(seller, 2)
    large = _compare_queries(other_seller, 6)
    assert small == large, f"{small} queries for 2 returns and refunds, {large} for 6"
