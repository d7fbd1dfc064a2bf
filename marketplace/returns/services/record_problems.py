"""No poison record: each listed refund or return is stored and decided on its own.

A record that raises anything while it is stored or decided (an amount of ``1e300`` that
no ``Decimal`` context quantizes, ``99 999 999 999`` that overflows its column, a value no
parser reads, a bug) is rolled back to its own savepoint, recorded as a
``ReturnsRecordProblem`` staff see, and skipped: the rest of the page is stored and
decided, and the listing goes on. The record is tried again at the next pulls, up to
``RETURNS_RECORD_MAX_FAILURES``; then it is a dead letter, left alone until the platform's
record changes (another digest) or staff retry it.

One ``RecordGuard`` per listing: it reads the seller's open problems once, so a pull with
no problem costs no query of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from marketplace.returns.models import ReturnsRecordProblem

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RecordGuard:
    """Runs each record's work in its own savepoint and keeps its problems."""

    def __init__(self, *, seller_id: int, kind: str) -> None:
        self.seller_id = seller_id
        self.kind = kind
        self.open: dict[str, ReturnsRecordProblem] = {
            p.record_key: p
            for p in ReturnsRecordProblem.objects.filter(
                seller_id=seller_id, kind=kind, resolved_at__isnull=True
            )
        }
        self.failed = 0

    def is_dead(self, key: str, digest: str) -> bool:
        """A dead letter whose record has not changed since: not tried again."""
        problem = self.open.get(key)
        return bool(problem and problem.dead_at and problem.entry_digest == digest)

    def retry_keys(self) -> list[str]:
        """Records that failed and are not dead letters (tried again by their own read)."""
        return [key for key, p in self.open.items() if p.dead_at is None]

    def dead_keys(self) -> list[str]:
        return [key for key, p in self.open.items() if p.dead_at is not None]

    def run(
        self,
        key: str,
        digest: str,
        work: Callable[[], T],
        *,
        mp_order_number: str = "",
        resolve: bool = True,
    ) -> tuple[bool, T | None]:
        """``(True, work())``, or ``(False, None)`` when it raised (recorded) or the record
        is a dead letter. ``resolve=False``: a later stage of the same record follows (its
        problem is resolved only when that one goes through too, so the cap counts)."""
        if self.is_dead(key, digest):
            return False, None
        try:
            with transaction.atomic():
                value = work()
        except Exception as exc:  # any error: this record only, never the listing
            logger.warning(
                "%s %s of seller %s could not be stored or decided: %r",
                self.kind,
                key,
                self.seller_id,
                exc,
            )
            self.failed += 1
            self._record(key, digest, mp_order_number, exc)
            return False, None
        if resolve:
            self.resolve(key)
        return True, value

    def resolve(self, key: str) -> None:
        """The record went through: its problem, if any, is resolved."""
        if key in self.open:
            ReturnsRecordProblem.objects.filter(pk=self.open.pop(key).pk).update(
                resolved_at=timezone.now()
            )

    def _record(self, key: str, digest: str, mp_order_number: str, exc: Exception) -> None:
        now = timezone.now()
        message = f"{type(exc).__name__}: {exc}"[:2000]
        problem = self.open.get(key)
        if problem is None:
            problem = self._reopen_or_create(key, now)
        if problem.entry_digest and problem.entry_digest != digest:
            problem.failures = 0  # the platform's record changed: a fresh count
            problem.dead_at = None
        problem.entry_digest = digest
        problem.mp_order_number = mp_order_number[:128]
        problem.error = message
        problem.failures += 1
        problem.last_failed_at = now
        if problem.failures >= settings.RETURNS_RECORD_MAX_FAILURES:
            problem.dead_at = problem.dead_at or now
        problem.save()
        self.open[key] = problem

    def _reopen_or_create(self, key: str, now: datetime) -> ReturnsRecordProblem:
        values = {"first_failed_at": now, "last_failed_at": now}
        try:
            with transaction.atomic():
                problem, _ = ReturnsRecordProblem.objects.get_or_create(
                    seller_id=self.seller_id, kind=self.kind, record_key=key[:128], defaults=values
                )
        except IntegrityError:  # another pull created it meanwhile
            problem = ReturnsRecordProblem.objects.get(
                seller_id=self.seller_id, kind=self.kind, record_key=key[:128]
            )
        if problem.resolved_at is not None:  # solved earlier, back again: a fresh count
            problem.resolved_at = None
            problem.dead_at = None
            problem.failures = 0
            problem.first_failed_at = now
        return problem


def record_problem_retry(*, problem_id: int) -> bool:
    """Staff's retry of a dead letter: tried again at the next pull."""
    return bool(
        ReturnsRecordProblem.objects.filter(pk=problem_id, resolved_at__isnull=True).update(
            dead_at=None, failures=0
        )
    )
