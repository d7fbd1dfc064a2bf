"""Pulling the sellers' fulfillments: list changed orders, fetch, store, report, settle.

Per seller, one pull at a time: a lease on the seller's ``SellerPullState`` row, taken
with a conditional UPDATE (atomic on Postgres and SQLite, no lock held during HTTP), so
a seller's slow pull never blocks another seller's. Pages are processed one at a time
(bounded memory); the cursor (the platform's ``seller_updated_at`` of the last order
processed) is saved after each page, and the next pull starts a little earlier
(``PULL_CURSOR_OVERLAP``) so a clock skew at the platform cannot hide a change. Orders
re-listed by the overlap with an unchanged ``seller_updated_at`` are skipped, so a pull
with nothing new costs one listing request.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import Order, SellerPullState, ValidationProblem
from marketplace.orders.services.fulfillment import order_fulfillment_pull, order_problems_report
from marketplace.platform.calllog import platform_calls_buffered
from marketplace.platform.client import PlatformClient
from marketplace.platform.errors import PlatformError
from sellers.errors import SellerConnectionError
from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)

# The first pull of a seller: every order the seller ever touched.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class PullResult:
    seller_id: int
    ran: bool = False
    pages: int = 0
    listed: int = 0
    fetched: int = 0
    changed: int = 0
    reported: int = 0
    settled: int = 0
    error: str = ""
    settled_orders: list[str] = field(default_factory=list)


def _pull_claim(*, seller_id: int) -> tuple[str, datetime | None] | None:
    now = timezone.now()
    try:
        state, _ = SellerPullState.objects.get_or_create(seller_id=seller_id)
    except IntegrityError:  # created concurrently
        state = SellerPullState.objects.get(seller_id=seller_id)
    token = secrets.token_hex(16)
    taken = (
        SellerPullState.objects.filter(pk=state.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            claim_token=token,
            lease_until=now + timedelta(seconds=settings.PULL_LEASE_SECONDS),
            last_started_at=now,
            updated_at=now,
        )
    )
    if not taken:
        return None
    state.refresh_from_db(fields=["cursor"])
    return token, state.cursor


def _pull_checkpoint(*, seller_id: int, token: str, cursor: datetime | None) -> bool:
    """Save the cursor after a page, only while we still hold the lease (and never backwards)."""
    now = timezone.now()
    with transaction.atomic():
        state = (
            SellerPullState.objects.select_for_update()
            .filter(seller_id=seller_id, claim_token=token)
            .first()
        )
        if state is None:
            return False
        if cursor is not None and (state.cursor is None or cursor > state.cursor):
            state.cursor = cursor
        state.lease_until = now + timedelta(seconds=settings.PULL_LEASE_SECONDS)
        state.save(update_fields=["cursor", "lease_until", "updated_at"])
    return True


def _pull_release(*, seller_id: int, token: str, error: str) -> None:
    now = timezone.now()
    values: dict[str, Any] = {
        "claim_token": "",
        "lease_until": None,
        "last_finished_at": now,
        "last_error": error[:2000],
        "updated_at": now,
    }
    if not error:
        values["last_success_at"] = now
    SellerPullState.objects.filter(seller_id=seller_id, claim_token=token).update(**values)


def seller_pull(*, seller_id: int) -> PullResult:
    """Pull one seller's changed fulfillments (skipped if a pull of this seller runs)."""
    result = PullResult(seller_id=seller_id)
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    if connection is None or not connection.is_live:
        result.error = "not connected"
        return result
    claim = _pull_claim(seller_id=seller_id)
    if claim is None:
        return result
    token, cursor = claim
    result.ran = True
    client = PlatformClient.for_connection(connection)
    since = (cursor - settings.PULL_CURSOR_OVERLAP) if cursor else EPOCH
    try:
        for page in client.iter_order_pages(
            seller_updated_after=since, page_size=settings.PULL_PAGE_SIZE
        ):
            # One call-log INSERT per page instead of one per request (no transaction
            # is open here, so the records are written even if the page fails).
            with platform_calls_buffered():
                page_cursor = _pull_page(client, seller_id, page, result)
            result.pages += 1
            if not _pull_checkpoint(seller_id=seller_id, token=token, cursor=page_cursor):
                result.error = "lost the pull lease"
                return result
        result.reported += _report_pending_problems(client, seller_id)
    except (PlatformError, SellerConnectionError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        logger.warning("pull of seller %s stopped: %s", seller_id, result.error)
    finally:
        _pull_release(seller_id=seller_id, token=token, error=result.error)
    return result


def _pull_page(
    client: PlatformClient, seller_id: int, page: dict[str, Any], result: PullResult
) -> datetime | None:
    """Process one listing page; returns the newest seller_updated_at it held."""
    newest: datetime | None = None
    entries = [entry for entry in page.get("orders") or [] if isinstance(entry, dict)]
    # One query for the page's orders, not one per listed order.
    ours = {
        order.mp_order_number: order
        for order in Order.objects.filter(
            seller_id=seller_id,
            mp_order_number__in=[str(e.get("mp_order_number") or "") for e in entries],
        ).only("id", "mp_order_number", "platform_seller_updated_at")
    }
    for entry in entries:
        result.listed += 1
        number = str(entry.get("mp_order_number") or "")
        raw_updated = entry.get("seller_updated_at")
        updated = parse_datetime(raw_updated) if isinstance(raw_updated, str) else None
        if updated is not None:
            newest = max(newest, updated) if newest else updated
        order = ours.get(number)
        if order is None:
            continue  # not ours (placed by another marketplace or deleted here)
        if updated is not None and order.platform_seller_updated_at == updated:
            continue  # re-listed by the cursor overlap; nothing new
        body = client.get_fulfillments(number)
        result.fetched += 1
        # Store, record the PULLED event and settle in one transaction (no HTTP inside).
        outcome = order_fulfillment_pull(
            order_id=order.id,
            body=body,
            seller_updated_at=updated,
            listed_seller_updated_at=raw_updated,
        )
        if outcome.changed:
            result.changed += 1
        if outcome.report_due:
            result.reported += order_problems_report(order_id=order.id, client=client)
        if outcome.settled:
            result.settled += 1
            result.settled_orders.append(number)
    return newest


def _report_pending_problems(client: PlatformClient, seller_id: int, limit: int = 100) -> int:
    """Problems whose report failed earlier (their order may not be re-listed)."""
    order_ids = list(
        ValidationProblem.objects.filter(
            order__seller_id=seller_id, reported_at__isnull=True, resolved_at__isnull=True
        )
        .values_list("order_id", flat=True)
        .distinct()[:limit]
    )
    return sum(order_problems_report(order_id=order_id, client=client) for order_id in order_ids)


def sellers_pull_fan_out() -> list[int]:
    """Queue one pull per connected seller; returns their ids."""
    from marketplace.orders.tasks import seller_pull_task

    seller_ids = list(
        PlatformConnection.objects.filter(state=PlatformConnection.State.CONNECTED)
        .order_by("seller_id")
        .values_list("seller_id", flat=True)
    )
    for seller_id in seller_ids:
        transaction.on_commit(lambda seller_id=seller_id: seller_pull_task.delay(seller_id))
    return seller_ids
