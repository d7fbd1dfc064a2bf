"""Writing and pruning the platform call log.

A batch of calls (a push batch) can buffer its records and write them with one INSERT
(``platform_calls_buffered``): one row per call stays the rule, only the round trips go.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from datetime import timedelta
from typing import Any, TypeVar

from django.utils import timezone

from marketplace.db import rows_insert
from marketplace.log_redaction import redact
from marketplace.platform.models import PlatformCall

logger = logging.getLogger(__name__)
T = TypeVar("T")

EXCERPT_CHARS = 2000
# A successful call keeps a short response excerpt (the order client logs no request
# body for it: what a push sent is on the sync row). Full excerpts at 600 pushes/s would
# add ~200 GB a day to the log. Failures keep EXCERPT_CHARS: that is when people read them.
SUCCESS_EXCERPT_CHARS = 300
RETENTION = timedelta(days=14)

# Keys whose values never reach the call log, in requests or answers of any API group
# (``scrub.scrub_secrets`` replaces them, case-blind, at any depth): the buyer's
# personal data. The order and the return hold it; the log is for reading what went
# wrong, not who bought. Free text goes too: buyers write phone numbers and door codes
# into notes, and a return's reason is the buyer's own words. README, "Buyers' personal
# data", lists every place such data lives.
PERSONAL_KEYS = frozenset(
    {
        # whole objects
        "customer",
        "shipping_address",
        "billing_address",
        # names, e-mails, phones, VAT numbers
        "full_name",
        "first_name",
        "last_name",
        "customer_name",
        "company",
        "email",
        "customer_email",
        "phone",
        "customer_phone",
        "ship_phone",
        "vat",
        "customer_vat",
        "vat_number",
        # an address's lines
        "address1",
        "address2",
        "address3",
        "city",
        "postal_code",
        "zip",
        # free text
        "notes",
        "delivery_notes",
        "reason",
        "refund_notes",
    }
)

# The open buffer of this context; threads started for a batch run in a copy of the
# context (contextvars.copy_context) and so append to the same list.
_buffer: ContextVar[list[PlatformCall] | None] = ContextVar("platform_calls_buffer", default=None)


def excerpt(text: str | bytes | None, *, chars: int = EXCERPT_CHARS) -> str:
    """A redacted, bounded excerpt of a request or response body."""
    if not text:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return redact(text[:chars])


def platform_call_record(
    *,
    method: str,
    path: str,
    status: int | None,
    duration_ms: int,
    seller_id: int | None = None,
    order_number: str = "",
    attempt: int = 1,
    error: str = "",
    request_body: str | bytes | None = None,
    response_body: str | bytes | None = None,
) -> PlatformCall:
    succeeded = status is not None and status < 400 and not error
    chars = SUCCESS_EXCERPT_CHARS if succeeded else EXCERPT_CHARS
    call = PlatformCall(
        seller_id=seller_id,
        order_number=order_number[:128],
        method=method.upper(),
        path=redact(path)[:512],
        status=status,
        duration_ms=duration_ms,
        attempt=attempt,
        error=redact(error)[:200],
        request_excerpt=excerpt(request_body, chars=chars),
        response_excerpt=excerpt(response_body, chars=chars),
    )
    pending = _buffer.get()
    if pending is not None:
        pending.append(call)
    else:
        call.save()
    return call


@contextmanager
def platform_calls_buffered() -> Iterator[None]:
    """Collect the call records made inside the block; write them at its end in one
    statement (``rows_insert``: a ``COPY`` on Postgres).

    Do not open it inside a transaction that may roll back: the records are diagnostics
    and are written even when the block raises. Nested blocks share the outer buffer.
    """
    if _buffer.get() is not None:
        yield
        return
    calls: list[PlatformCall] = []
    token = _buffer.set(calls)
    try:
        yield
    finally:
        _buffer.reset(token)
        _calls_write(calls)


class PlatformCallsCollected:
    """``platform_calls_buffered`` for calls made in other threads and written later by
    the caller's thread (an outbox batch sent while the next one is claimed).

    ``run`` runs a function in a copy of the caller's context with this buffer set (each
    thread needs a context of its own; the copies share the list). ``write`` writes the
    records from the thread that owns the database connection. Inside an open buffer, the
    outer one collects and writes them.
    """

    def __init__(self) -> None:
        self._context = copy_context()
        self._calls: list[PlatformCall] | None = None
        if _buffer.get() is None:
            self._calls = []
            self._context.run(_buffer.set, self._calls)

    def run(self, function: Callable[..., T], *args: Any) -> T:
        return self._context.copy().run(function, *args)

    def write(self) -> None:
        """Write the records collected so far and drop them from the list. The list stays
        the one the threads append to (a new one would lose what they add after this)."""
        if self._calls is not None:
            written = len(self._calls)
            calls = self._calls[:written]
            del self._calls[:written]  # appends only ever add after these
            _calls_write(calls)


def _calls_write(calls: list[PlatformCall]) -> None:
    try:
        rows_insert(calls)
    except Exception:  # the call log must never turn good pushes into failures
        logger.exception("could not record %d platform calls", len(calls))


def platform_call_prune(*, older_than: timedelta = RETENTION, batch_size: int = 5000) -> int:
    """Delete call records past retention, in bounded batches; returns how many."""
    cutoff = timezone.now() - older_than
    deleted = 0
    while True:
        ids = list(
            PlatformCall.objects.filter(created_at__lt=cutoff)
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            return deleted
        deleted += PlatformCall.objects.filter(id__in=ids).delete()[0]
