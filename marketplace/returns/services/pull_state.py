"""What one returns/refunds pull of a seller carries: its result, the lease on the
seller's ``SellerReturnsPullState`` (conditional UPDATE, no lock held during HTTP), and
the pages of a listing."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.db.models import Q
from django.utils import timezone

from marketplace.returns.models import SellerReturnsPullState


@dataclass
class ReturnsPullResult:
    seller_id: int
    ran: bool = False
    requests: int = 0
    returns_listed: int = 0
    refunds_listed: int = 0
    changed: int = 0
    decided: int = 0
    record_failures: int = 0
    returns_error: str = ""
    refunds_error: str = ""

    @property
    def error(self) -> str:
        return "; ".join(
            f"{kind}: {text}"
            for kind, text in (("returns", self.returns_error), ("refunds", self.refunds_error))
            if text
        )


def pull_lease_claim(seller_id: int) -> tuple[str, SellerReturnsPullState] | None:
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


def pull_state_save(seller_id: int, token: str, **values: Any) -> None:
    SellerReturnsPullState.objects.filter(seller_id=seller_id, claim_token=token).update(
        updated_at=timezone.now(), **values
    )


def listing_pages(
    list_page: Callable[..., dict[str, Any]],
    key: str,
    filters: dict[str, Any],
    result: ReturnsPullResult,
) -> Iterator[tuple[list[dict[str, Any]], datetime]]:
    """Each page's entries (objects only) and when it was asked for."""
    cursor: str | None = None
    while True:
        asked = timezone.now()
        page = list_page(**filters, page_size=settings.PULL_PAGE_SIZE, cursor=cursor)
        result.requests += 1
        yield [e for e in page.get(key) or [] if isinstance(e, dict)], asked
        cursor = page.get("next_cursor") or None
        if not cursor:
            return
