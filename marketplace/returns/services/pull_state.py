"""What one returns/refunds pull of a seller carries: its result (which listings ran, how
each ended, the returns listing's new watermark) and the pages of a listing. The state
between pulls is ``marketplace.sync``'s, which saves what the result says."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone


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
    # Which listings ran (a listing with nothing to find is not asked for) and how each
    # ended ("" when it went through).
    returns_listed_now: bool = False
    refunds_listed_now: bool = False
    returns_error: str = ""
    refunds_error: str = ""
    # Our clock at the start of a returns listing that went through: the next watermark.
    returns_watermark: datetime | None = None

    @property
    def error(self) -> str:
        return "; ".join(
            f"{kind}: {text}"
            for kind, text in (("returns", self.returns_error), ("refunds", self.refunds_error))
            if text
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
