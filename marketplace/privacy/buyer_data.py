"""Where a buyer's personal data sits in our tables, and the one set-based step that
replaces it by a pseudonym for a batch of orders (README, "Buyers' personal data").

Kept: order numbers, lines, quantities, money, states, dates, the ship-to country (tax
and reporting need it) and the ledger. Replaced: the buyer's name (by "Buyer <order id>",
a pseudonym that still tells two orders' buyers apart on a page), e-mail, phone, VAT
number, address lines, city, postal code and every free text a buyer or seller wrote
about them; the push's last payload and answer (copies of the order); call log rows of
the order. No row is read into Python: each table is one UPDATE for the whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import (
    CharField,
    Exists,
    F,
    Func,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from marketplace.orders.models import MarketplaceState, Order, OrderSync, SyncEvent
from marketplace.platform.models import PlatformCall
from marketplace.privacy.models import ErasedOrder
from marketplace.returns.models import (
    Decision,
    PlatformStep,
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
    StepKind,
    StepStatus,
)

ERASED = "[erased]"
PSEUDONYM_PREFIX = "Buyer "


@dataclass(frozen=True)
class Erased:
    orders: int = 0
    returns: int = 0
    calls: int = 0

    def __add__(self, other: Erased) -> Erased:
        return Erased(
            orders=self.orders + other.orders,
            returns=self.returns + other.returns,
            calls=self.calls + other.calls,
        )


def orders_closed(*, quiet_since: datetime | None = None) -> QuerySet[Order]:
    """Orders whose buyer data nothing needs any more: settled (shipped or cancelled),
    every return final (completed, rejected or refused by us), no seller refund waiting
    for a decision (a paused one waits for the seller, who may never correct it: it does
    not hold the buyer's data), no platform call of theirs still to send; not erased yet.

    ``quiet_since``: and nothing of the order, its returns or refunds changed after it
    (the retention period's start)."""
    returns = Return.objects.filter(order=OuterRef("pk"))
    refunds = SellerRefund.objects.filter(order=OuterRef("pk"))
    final = Q(status__in=[ReturnStatus.COMPLETED, ReturnStatus.REJECTED]) | Q(
        decision=Decision.REFUSED
    )
    if quiet_since is not None:
        # The platform publishes no refusal: a seller who refuses may leave a return
        # awaiting authorization for ever (reading A). Untouched for the whole retention
        # period it is over, or the buyer's data would be kept for ever.
        final |= Q(status=ReturnStatus.AWAITING_AUTHORIZATION, updated_at__lt=quiet_since)
    open_returns = returns.exclude(final)
    open_steps = PlatformStep.objects.filter(
        Q(return_request__order=OuterRef("pk")) | Q(refund__order=OuterRef("pk")),
        status__in=[StepStatus.PENDING, StepStatus.RETRYING],
    )
    query = (
        Order.objects.filter(state__in=[MarketplaceState.SHIPPED, MarketplaceState.CANCELLED])
        .exclude(Exists(ErasedOrder.objects.filter(order=OuterRef("pk"))))
        .exclude(Exists(open_returns))
        .exclude(Exists(refunds.filter(status=RefundStatus.CREATED)))
        .exclude(Exists(open_steps))
    )
    if quiet_since is not None:
        query = (
            query.filter(updated_at__lt=quiet_since)
            .exclude(Exists(returns.filter(updated_at__gte=quiet_since)))
            .exclude(Exists(refunds.filter(updated_at__gte=quiet_since)))
        )
    return query


def _replace(text: F, quoted: Combinable) -> Func:
    """SQL ``REPLACE(text, quoted, '[erased]')`` (Django's ``Replace`` takes the same, but
    its type stub only a constant to look for)."""
    return Func(text, quoted, Value(ERASED), function="REPLACE", output_field=TextField())


def orders_pseudonymize(*, order_ids: list[int], why: str) -> Erased:
    """Replace the buyer data of these orders (and their returns, refunds, sync rows and
    call log rows) in one transaction; mark them erased. Safe to run twice."""
    if not order_ids:
        return Erased()
    pseudonym = Concat(Value(PSEUDONYM_PREFIX), Cast(F("id"), output_field=CharField()))
    with transaction.atomic():
        numbers = list(
            Order.objects.filter(id__in=order_ids).values_list("mp_order_number", flat=True)
        )
        # Texts that may quote the buyer (a platform's error message naming the name or
        # the e-mail, kept on the sync row and in the history): the quotes replaced, the
        # rest kept. Before the order's own fields change: they say what to look for.
        for field in ("customer_full_name", "ship_full_name", "customer_email"):
            quoted = Subquery(
                Order.objects.filter(pk=OuterRef("order_id")).values(field)[:1],
                output_field=CharField(),
            )
            SyncEvent.objects.filter(order_id__in=order_ids).update(
                message=_replace(F("message"), quoted)
            )
            OrderSync.objects.filter(order_id__in=order_ids).update(
                last_error=_replace(F("last_error"), quoted)
            )
        orders = Order.objects.filter(id__in=order_ids).update(
            customer_full_name=pseudonym,
            customer_email="",
            customer_phone="",
            customer_vat="",
            ship_full_name=pseudonym,
            ship_address1=ERASED,
            ship_address2="",
            ship_address3="",
            ship_city=ERASED,
            ship_state="",
            ship_postal_code="",
            ship_phone="",
            delivery_notes="",
            # A hash of the intake body, personal data included: a guess could be checked
            # against it. A repeated intake of the old body now answers 409, not 200.
            intake_fingerprint=ERASED,
        )
        OrderSync.objects.filter(order_id__in=order_ids).update(last_payload=None, last_response="")
        returns = Return.objects.filter(order_id__in=order_ids).update(
            reason=ERASED, notes="", tracking_number=""
        )
        # A return push's body is built from the order when sent; a stored one is a copy.
        PlatformStep.objects.filter(
            return_request__order_id__in=order_ids, kind=StepKind.PUSH_RETURN
        ).update(body=None)
        SellerRefund.objects.filter(order_id__in=order_ids).update(notes="")
        calls, _ = PlatformCall.objects.filter(order_number__in=numbers).delete()
        now = timezone.now()
        ErasedOrder.objects.bulk_create(
            [ErasedOrder(order_id=pk, why=why, erased_at=now) for pk in order_ids],
            ignore_conflicts=True,
        )
    return Erased(orders=orders, returns=returns, calls=calls)
