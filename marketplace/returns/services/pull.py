"""Pulling a seller's returns' progress and the seller's own refunds.

Cost follows change, not history
--------------------------------
Per seller, and only when something can be found (``selectors``: open returns; orders a
seller may still refund), one listing of ``GET /returns`` and one of ``GET /refunds``,
each with ``updated_after`` (strictly after) and the contract's cursor:

* The watermark is *our* clock at the start of the last complete listing: neither a
  return nor a refund carries an update time in the contract's shapes, and a field only
  our sandbox sends must not become a dependency. The next listing asks for changes after
  it less ``PULL_CURSOR_OVERLAP`` (clock skew); whatever that overlap lists again is
  matched by a digest of what we stored and costs no write and no request. A listing
  that fails keeps the old watermark: the next pull reads the same changes again, and
  deciding is idempotent.
* ``status`` filters out what we ourselves finished (``COMPLETED`` returns, refunds no
  longer ``CREATED``): marking complete is a change, and would otherwise bring every
  finished refund back once more. So a seller with 10 000 completed refunds and 10 new
  ones makes the same requests as one with 100.
* A listed return that is ``REFUNDED`` and not decided costs one more request: its
  refund amounts (``.../refunds``).

Decisions are made as the listing is read (``services/decide.py``), each refund page in
a fixed order (date created, then the platform's id), per order line under a row lock.

Per seller one pull at a time: a lease on ``SellerReturnsPullState`` (conditional
UPDATE, no lock held during HTTP).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import Order, OrderLine
from marketplace.platform.errors import PlatformError
from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.amounts import REFUND_AMOUNT_FIELDS, line_amounts_read
from marketplace.returns.models import (
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
    SellerRefundLine,
    SellerReturnsPullState,
)
from marketplace.returns.selectors import seller_has_open_returns, seller_may_get_refunds
from marketplace.returns.services.decide import refund_decide, return_decide
from sellers.errors import SellerConnectionError
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# What we list: returns not finished by us; refunds the seller posted and we did not
# answer yet.
RETURN_LIST_STATUSES = ("AWAITING_AUTHORIZATION", "AUTHORIZED", "REFUNDED", "REJECTED")
REFUND_LIST_STATUSES = ("CREATED",)
ZERO = Decimal("0")


@dataclass
class ReturnsPullResult:
    seller_id: int
    ran: bool = False
    requests: int = 0
    returns_listed: int = 0
    refunds_listed: int = 0
    changed: int = 0
    decided: int = 0
    error: str = ""


def digest(entry: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(entry, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


# --- the lease ----------------------------------------------------------------------------


def _claim(seller_id: int) -> tuple[str, SellerReturnsPullState] | None:
    now = timezone.now()
    try:
        state, _ = SellerReturnsPullState.objects.get_or_create(seller_id=seller_id)
    except IntegrityError:
        state = SellerReturnsPullState.objects.get(seller_id=seller_id)
    token = secrets.token_hex(16)
    taken = (
        SellerReturnsPullState.objects.filter(pk=state.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            claim_token=token,
            lease_until=now + timedelta(seconds=settings.PULL_LEASE_SECONDS),
            updated_at=now,
        )
    )
    if not taken:
        return None
    state.refresh_from_db()
    return token, state


def _save(seller_id: int, token: str, **values: Any) -> None:
    SellerReturnsPullState.objects.filter(seller_id=seller_id, claim_token=token).update(
        updated_at=timezone.now(), **values
    )


# --- the pull -----------------------------------------------------------------------------


def seller_returns_pull(
    *, seller_id: int, client: OrderSourceClient | None = None
) -> ReturnsPullResult:
    """Read this seller's changed returns and refunds and decide the new ones."""
    result = ReturnsPullResult(seller_id=seller_id)
    want_returns = seller_has_open_returns(seller_id=seller_id)
    want_refunds = seller_may_get_refunds(seller_id=seller_id)
    if not (want_returns or want_refunds):
        return result
    if client is None:
        connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
        if connection is None or not connection.is_live:
            result.error = "not connected"
            return result
        client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
    claimed = _claim(seller_id)
    if claimed is None:
        return result
    token, state = claimed
    result.ran = True
    try:
        if want_returns:
            started = timezone.now()
            _list_returns(client, seller_id, state.returns_watermark, result)
            _save(seller_id, token, returns_watermark=started)
        if want_refunds:
            started = timezone.now()
            _list_refunds(client, seller_id, state.refunds_watermark, result)
            _save(seller_id, token, refunds_watermark=started)
    except (PlatformError, SellerConnectionError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        logger.warning("returns pull of seller %s stopped: %s", seller_id, result.error)
    finally:
        _save(
            seller_id,
            token,
            claim_token="",
            lease_until=None,
            last_finished_at=timezone.now(),
            last_error=result.error[:2000],
        )
    return result


def _since(watermark: datetime | None) -> datetime:
    return watermark - settings.PULL_CURSOR_OVERLAP if watermark else EPOCH


def _list_returns(
    client: OrderSourceClient, seller_id: int, watermark: datetime | None, result: ReturnsPullResult
) -> None:
    for page in _pages(client.list_returns, "returns", RETURN_LIST_STATUSES, watermark, result):
        entries = [e for e in page if isinstance(e, dict)]
        ours = _our_returns(seller_id, entries)
        for entry in entries:
            result.returns_listed += 1
            key = (
                str(entry.get("mp_order_number") or ""),
                str(entry.get("mp_return_number") or ""),
            )
            return_request = ours.get(key)
            if return_request is not None:
                _return_seen(client, return_request, entry, result)


def _our_returns(seller_id: int, entries: list[dict[str, Any]]) -> dict[tuple[str, str], Return]:
    numbers = {str(e.get("mp_return_number") or "") for e in entries}
    return {
        (r.order.mp_order_number, r.mp_return_number): r
        for r in Return.objects.filter(
            seller_id=seller_id, mp_return_number__in=numbers
        ).select_related("order")
    }


def _return_seen(
    client: OrderSourceClient,
    return_request: Return,
    entry: dict[str, Any],
    result: ReturnsPullResult,
) -> None:
    seen = digest(entry)
    status = str(entry.get("status") or "")
    if seen == return_request.platform_digest and (
        return_request.decision or status != ReturnStatus.REFUNDED
    ):
        return  # listed again by the overlap: nothing new
    result.changed += 1
    values: dict[str, Any] = {
        "platform_digest": seen,
        "pulled_at": timezone.now(),
        "rma": str(entry.get("rma") or "")[:128],
        "notes": str(entry.get("notes") or ""),
        "updated_at": timezone.now(),
    }
    # Never back from COMPLETED (we set it when our "complete" was answered).
    if status in ReturnStatus.values and return_request.status != ReturnStatus.COMPLETED:
        values["status"] = status
    Return.objects.filter(pk=return_request.pk).update(**values)
    if status == ReturnStatus.REFUNDED and not return_request.decision:
        refunds = client.get_return_refunds(
            return_request.order.mp_order_number, return_request.mp_return_number
        )
        result.requests += 1
        # As sent: the decision reads the amounts strictly (amounts.py).
        return_decide(
            return_pk=return_request.pk, refund_lines=refunds.get("merchant_refund_lines")
        )
        result.decided += 1


def _list_refunds(
    client: OrderSourceClient, seller_id: int, watermark: datetime | None, result: ReturnsPullResult
) -> None:
    for page in _pages(client.list_refunds, "refunds", REFUND_LIST_STATUSES, watermark, result):
        entries = [e for e in page if isinstance(e, dict)]
        result.refunds_listed += len(entries)
        undecided = _refunds_store(seller_id, entries, result)
        for refund_pk in undecided:
            refund_decide(refund_pk=refund_pk)
            result.decided += 1


def _pages(
    list_page: Any,
    key: str,
    statuses: tuple[str, ...],
    watermark: datetime | None,
    result: ReturnsPullResult,
) -> Any:
    cursor: str | None = None
    since = _since(watermark)
    while True:
        page = list_page(
            status=list(statuses),
            updated_after=since,
            page_size=settings.PULL_PAGE_SIZE,
            cursor=cursor,
        )
        result.requests += 1
        yield page.get(key) or []
        cursor = page.get("next_cursor") or None
        if not cursor:
            return


def _refunds_store(
    seller_id: int, entries: list[dict[str, Any]], result: ReturnsPullResult
) -> list[int]:
    """Store the page's refunds (new, or changed and not decided yet); returns the pks of
    those to decide, in the order to decide them."""
    ids = [
        str(e.get("feedamp_refund_id")) for e in entries if e.get("feedamp_refund_id") is not None
    ]
    known = {
        r.refund_id: r for r in SellerRefund.objects.filter(seller_id=seller_id, refund_id__in=ids)
    }
    orders = {
        o.mp_order_number: o
        for o in Order.objects.filter(
            seller_id=seller_id,
            mp_order_number__in={str(e.get("mp_order_number") or "") for e in entries},
        )
    }
    to_decide: list[tuple[datetime, int, str, int]] = []
    for entry in entries:
        refund_id = str(entry.get("feedamp_refund_id") or "")
        order = orders.get(str(entry.get("mp_order_number") or ""))
        if not refund_id or order is None:
            continue  # not ours
        seen = digest(entry)
        refund = known.get(refund_id)
        if refund is not None and (refund.decision or refund.platform_digest == seen):
            if not refund.decision:
                to_decide.append(_decide_key(refund))
            continue
        result.changed += 1
        refund = _refund_upsert(seller_id, order, refund_id, entry, seen, refund)
        if not refund.decision:
            to_decide.append(_decide_key(refund))
    return [pk for *_, pk in sorted(to_decide)]


def _decide_key(refund: SellerRefund) -> tuple[datetime, int, str, int]:
    numeric = int(refund.refund_id) if refund.refund_id.isdigit() else 0
    return (refund.date_created or EPOCH, numeric, refund.refund_id, refund.pk)


def _refund_upsert(
    seller_id: int,
    order: Order,
    refund_id: str,
    entry: dict[str, Any],
    seen: str,
    refund: SellerRefund | None,
) -> SellerRefund:
    raw_created = entry.get("date_created")
    created = parse_datetime(raw_created) if isinstance(raw_created, str) else None
    status = str(entry.get("status") or RefundStatus.CREATED)
    with transaction.atomic():
        if refund is None:
            refund, _ = SellerRefund.objects.get_or_create(
                seller_id=seller_id,
                refund_id=refund_id,
                defaults={"order": order, "status": RefundStatus.CREATED},
            )
        refund = SellerRefund.objects.select_for_update().get(pk=refund.pk)
        if refund.decision:
            return refund  # decided meanwhile by another pull
        refund.status = status if status in RefundStatus.values else RefundStatus.CREATED
        refund.notes = str(entry.get("notes") or "")
        refund.date_created = created
        refund.platform_digest = seen
        refund.pulled_at = timezone.now()
        refund.save()
        refund.lines.all().delete()
        lines = {line.mp_line_number: line for line in OrderLine.objects.filter(order=order)}
        read = [
            _refund_line(refund, item, lines, order.currency)
            for item in entry.get("merchant_refund_lines") or []
            if isinstance(item, dict)
        ]
        SellerRefundLine.objects.bulk_create(line for line, _ in read)
        # Amounts that could not be read: the decision refuses the refund with them.
        refund.read_problems = [problem for _, problems in read for problem in problems]
        refund.save(update_fields=["read_problems"])
    return refund


def _refund_line(
    refund: SellerRefund, item: dict[str, Any], lines: dict[str, OrderLine], currency: str
) -> tuple[SellerRefundLine, list[dict[str, str]]]:
    number = str(item.get("mp_line_number") or "")
    quantity = item.get("refund_quantity")
    amounts, errors = line_amounts_read(
        item, fields=REFUND_AMOUNT_FIELDS, currency=currency, label=number
    )
    problems = [{"code": e.code, "message": e.message, "label": number} for e in errors]
    line = SellerRefundLine(
        refund=refund,
        mp_line_number=number[:128],
        order_line=lines.get(number),
        currency=str(item.get("currency") or "")[:3],
        refund_quantity=quantity
        if isinstance(quantity, int) and not isinstance(quantity, bool)
        else 0,
        item_refund=amounts["item_refund"],
        item_tax_refund=amounts["item_tax_refund"],
        shipping_refund=amounts["shipping_refund"],
        shipping_tax_refund=amounts["shipping_tax_refund"],
        discount_refund=amounts["discount_refund"],
        reason=str(item.get("reason") or "")[:128],
    )
    return line, problems


def sellers_returns_pull_fan_out() -> list[int]:
    """Queue a returns pull for each connected seller with something open, at once.

    Not on beat (the pull schedule brings returns along, ``pull_hooks.py``): a one-off
    catch-up for operators, the soak and tests."""
    from functools import partial

    from marketplace.returns.selectors import sellers_with_open_returns_or_refunds
    from marketplace.returns.tasks import seller_returns_pull_task

    seller_ids = list(
        sellers_with_open_returns_or_refunds()
        .filter(connection__state=PlatformConnection.State.CONNECTED)
        .values_list("pk", flat=True)
    )
    for seller_id in seller_ids:
        transaction.on_commit(partial(seller_returns_pull_task.delay, seller_id))
    return seller_ids
