"""Erasure of one buyer on request (``manage.py erase_buyer``, the staff page).

Everything at once: closed orders (and their returns, refunds, sync rows) get the
pseudonym now; open orders keep what the platform still needs (the push sends the
address) and are marked pending, so the retention job erases them the moment they close;
call log rows of the buyer's orders, or that quote the buyer's e-mail or name, are
deleted. The erasure itself is recorded with who asked, when and the counts, and the
e-mail only as a keyed hash.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from marketplace.orders.models import Order
from marketplace.platform.models import PlatformCall
from marketplace.privacy.buyer_data import orders_closed, orders_pseudonymize
from marketplace.privacy.models import BuyerErasure, ErasedWhy, PendingErasure
from marketplace.returns.models import Return

logger = logging.getLogger(__name__)

# Names shorter than this are not searched for in the call log: "Al" would match much.
MIN_NAME_CHARS = 5


def email_normalize(email: str) -> str:
    return email.strip().lower()


def email_hash(email: str) -> str:
    """A keyed hash of the e-mail (SECRET_KEY-derived): matches a later request for the
    same address; says nothing to whoever reads the table without the key."""
    return salted_hmac("marketplace.privacy.erasure", email_normalize(email)).hexdigest()


def buyer_orders(*, email: str) -> QuerySet[Order]:
    return Order.objects.filter(customer_email__iexact=email_normalize(email))


@dataclass(frozen=True)
class ErasurePreview:
    orders_closed: int
    orders_open: int
    returns: int

    @property
    def orders(self) -> int:
        return self.orders_closed + self.orders_open


def buyer_erasure_preview(*, email: str) -> ErasurePreview:
    """What an erasure of this e-mail would touch (for the confirm step)."""
    orders = buyer_orders(email=email)
    total = orders.count()
    closed = orders_closed().filter(id__in=orders.values("id")).count()
    return ErasurePreview(
        orders_closed=closed,
        orders_open=total - closed,
        returns=Return.objects.filter(order__in=orders).count(),
    )


def _calls_mentioning(
    *, numbers: list[str], seller_ids: set[int], email: str, names: set[str]
) -> QuerySet[PlatformCall]:
    """Call log rows of the buyer's orders, and rows of their sellers' calls that quote
    the e-mail or a name (a listing such as ``GET /returns`` carries no order number;
    rows stored before a key joined the scrub list may quote them). The text search
    reads only those sellers' rows (an index), never the whole log."""
    quoted = Q()
    for text in {email, *names}:
        quoted |= Q(request_excerpt__icontains=text) | Q(response_excerpt__icontains=text)
        quoted |= Q(path__icontains=text) | Q(error__icontains=text)
    return PlatformCall.objects.filter(
        Q(order_number__in=numbers) | (Q(seller_id__in=seller_ids) & quoted)
    )


def buyer_erase(*, email: str, requested_by: str) -> BuyerErasure:
    """Erase the buyer with this e-mail everywhere we hold them (see the module doc)."""
    email = email_normalize(email)
    with transaction.atomic():
        orders = buyer_orders(email=email)
        rows = list(
            orders.values_list(
                "id", "mp_order_number", "seller_id", "customer_full_name", "ship_full_name"
            )
        )
        names = {n for row in rows for n in row[3:] if len(n) >= MIN_NAME_CHARS}
        order_ids = [row[0] for row in rows]
        closed = list(
            orders_closed().filter(id__in=order_ids).order_by("id").values_list("id", flat=True)
        )
        open_ids = sorted(set(order_ids) - set(closed))
        erased = orders_pseudonymize(order_ids=closed, why=ErasedWhy.REQUEST)
        calls, _ = _calls_mentioning(
            numbers=[row[1] for row in rows],
            seller_ids={row[2] for row in rows},
            email=email,
            names=names,
        ).delete()
        erasure = BuyerErasure.objects.create(
            email_hash=email_hash(email),
            requested_by=requested_by[:150],
            orders_erased=erased.orders,
            orders_pending=len(open_ids),
            returns_erased=erased.returns,
            calls_deleted=erased.calls + calls,
            completed_at=None if open_ids else timezone.now(),
        )
        # An order already waiting for an earlier request's erasure now waits for this one.
        PendingErasure.objects.filter(order_id__in=open_ids).update(erasure=erasure)
        PendingErasure.objects.bulk_create(
            [PendingErasure(order_id=pk, erasure=erasure) for pk in open_ids],
            ignore_conflicts=True,
        )
    # No e-mail, no name in the log: the erasure's id and counts say what happened.
    logger.info(
        "buyer erasure %s by %s: %d orders erased, %d pending until closed, %d returns, "
        "%d call log rows deleted",
        erasure.pk,
        erasure.requested_by,
        erasure.orders_erased,
        erasure.orders_pending,
        erasure.returns_erased,
        erasure.calls_deleted,
    )
    return erasure


def erasure_summary(erasure: BuyerErasure) -> str:
    """What an erasure did, in a sentence for the command's output and the staff page."""
    text = (
        f"Erasure {erasure.pk}: {erasure.orders_erased} order(s) and "
        f"{erasure.returns_erased} return(s) erased, {erasure.calls_deleted} call log "
        f"row(s) deleted."
    )
    if erasure.orders_pending:
        text += (
            f" {erasure.orders_pending} open order(s) keep what the platform still needs "
            "and are erased as soon as they close."
        )
    return text
