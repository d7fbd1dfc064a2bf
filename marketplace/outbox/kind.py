"""What a kind of outbox work tells the engine: its table, what to send, what an answer means.

A kind subclasses ``OutboxKind`` and overrides the hooks it needs; the engine calls them
at fixed points of the cycle (claim → send → record), always with the row locked and,
when recording, still held by the caller's claim. Hooks that write other tables do so in
the engine's transaction, so an answer and its consequences commit together.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol

from django.conf import settings
from django.db.models import Q

from marketplace.db import rows_update
from marketplace.outbox.backoff import backoff_seconds
from marketplace.outbox.models import OutboxItem
from marketplace.outbox.outcomes import Outcome


@dataclass(frozen=True)
class Claim:
    """One claimed row: what the sender needs, without touching the database."""

    pk: int
    key: int  # what callers name the row by (an order's id, a step's id, a seller's id)
    group: int  # whose calls these are (a seller): a 429 or a dead grant holds the group
    token: str
    version: int
    data: Any  # the kind's payload (order number and body, the step row, …)


@dataclass(frozen=True)
class Tuning:
    """The names of a kind's settings (``marketplace/settings/tuning.py``)."""

    lease: str
    batch: str
    drain: str
    max_failures: str
    backoff_base: str
    backoff_cap: str

    @classmethod
    def named(cls, prefix: str) -> Tuning:
        """``<prefix>_LEASE_SECONDS``, ``_BATCH_SIZE``, ``_DRAIN_SECONDS``, ``_MAX_FAILURES``,
        ``_BACKOFF_BASE``, ``_BACKOFF_CAP``."""
        return cls(
            *(
                f"{prefix}_{name}"
                for name in (
                    "LEASE_SECONDS",
                    "BATCH_SIZE",
                    "DRAIN_SECONDS",
                    "MAX_FAILURES",
                    "BACKOFF_BASE",
                    "BACKOFF_CAP",
                )
            )
        )


# The engine's fields (``OutboxItem``), written back with each kind's own.
ENGINE_FIELDS = [
    "attempts",
    "failures",
    "next_attempt_at",
    "claim_token",
    "lease_until",
    "last_error",
    "last_error_status",
    "updated_at",
]


class Journal(Protocol):
    """What a kind writes beside its rows in one transaction (events), flushed at its end."""

    def write(self) -> None: ...


class NoJournal:
    def write(self) -> None:
        return None


@dataclass(frozen=True)
class Answer:
    """What the record hooks get beside the row: the claim (None: a lost worker's), what
    came of it, the transaction's time and its journal."""

    claim: Claim | None
    outcome: Outcome
    now: datetime
    journal: Journal


class OutboxKind:
    """The base of every kind; defaults suit a kind with a ``status`` field."""

    name: ClassVar[str]
    model: ClassVar[type[OutboxItem]]
    # The kind's own fields written back besides ENGINE_FIELDS: by a record, and by a
    # claim (what the claim sets, e.g. the payload it built).
    fields: ClassVar[list[str]]
    claim_fields: ClassVar[list[str] | None] = None  # None: the same as ``fields``
    # Large columns neither step reads: not loaded by the claim, resp. by the record
    # (a push's 2 KB payload is built by the claim, its answer written by the record).
    claim_defer: ClassVar[tuple[str, ...]] = ()
    record_defer: ClassVar[tuple[str, ...]] = ()
    open_statuses: ClassVar[tuple[str, ...]] = ()
    dead_status: ClassVar[str] = "failed"
    # Floor of a 429's wait (seconds): the platform's Retry-After is whole seconds.
    embargo_min_seconds: ClassVar[float] = 1.0
    # A row woken before it is due gets a wake-up for when it is (False: the kind's own
    # countdown is always queued when it backs off).
    wake_early: ClassVar[bool] = True
    # Open rows always carry a due time (the sweeper repairs one that has none).
    due_time_required: ClassVar[bool] = True
    # A drain claims the next batch and records the last one while a full batch's calls
    # are in flight (``drain.drain``). Its calls then run in the sender threads even one at
    # a time, so ``send_one`` must not need the caller's transaction.
    sends_ahead: ClassVar[bool] = False

    # The names of the kind's settings (read at call time: tests override settings).
    tuning: ClassVar[Tuning]

    # --- tuning ------------------------------------------------------------------------------

    def lease_seconds(self) -> float:
        return float(getattr(settings, self.tuning.lease))

    def batch_size(self) -> int:
        return int(getattr(settings, self.tuning.batch))

    def drain_seconds(self) -> float:
        return float(getattr(settings, self.tuning.drain))

    def max_failures(self) -> int:
        return int(getattr(settings, self.tuning.max_failures))

    def backoff(self, failures: int) -> float:
        base = float(getattr(settings, self.tuning.backoff_base))
        cap = float(getattr(settings, self.tuning.backoff_cap))
        return backoff_seconds(failures, base=base, cap=cap)

    def call_budget_seconds(self) -> float:
        """The longest one call can take (no call starts unless it can end in the lease)."""
        raise NotImplementedError

    def send_concurrency(self) -> int:
        return 1

    # --- which rows ------------------------------------------------------------------------

    def open(self) -> Q:
        """Rows with work left (the engine adds: due, and not claimed by a live lease)."""
        return Q(status__in=self.open_statuses)

    def key_field(self) -> str:
        return "pk"

    def key_of(self, row: Any) -> int:
        return int(row.pk)

    def status_of(self, row: Any) -> str:
        return str(row.status)

    def is_dead(self, row: Any) -> bool:
        return bool(row.status == self.dead_status)

    def late(self, now: datetime) -> Q:
        """Rows the sweeper wakes a drain for (the engine adds: not claimed)."""
        return self.open() & Q(next_attempt_at__lte=now)

    def dead(self) -> Q:
        return Q(status=self.dead_status)

    def due_again_fields(self, now: datetime) -> dict[str, Any]:
        """What staff's retry writes: due now, counted afresh."""
        return {
            "status": self.open_statuses[0],
            "failures": 0,
            "attempts": 0,
            "next_attempt_at": now,
            "updated_at": now,
        }

    def skip(self, row: Any, now: datetime, force: bool, changed: list[Any]) -> str | None:
        """The kind's own reason not to claim ``row`` now (None: the engine decides).
        A row the hook repaired goes into ``changed``."""
        return None

    # --- claim, send, record -----------------------------------------------------------------

    def journal(self) -> Journal:
        return NoJournal()

    def prepare(
        self, rows: list[Any], token: str, now: datetime, journal: Journal
    ) -> tuple[list[Claim], dict[int, str]]:
        """Claims for the rows to send (the rest: their status, the kind changed them)."""
        raise NotImplementedError

    def group_open(self, group: int, claims: list[Claim]) -> Any:
        """What the group's calls need (a client); an ``Outcome`` holds the group instead."""
        return None

    def order(self, claims: list[Claim]) -> list[Claim]:
        """The order calls are started in."""
        return claims

    def send_one(self, client: Any, claim: Claim) -> Outcome:
        raise NotImplementedError

    def done(self, row: Any, answer: Answer) -> None:
        raise NotImplementedError

    def retrying(self, row: Any, answer: Answer, delay: float, counts: bool) -> None:
        """Status and history of a retry; the engine set the time and the error."""
        row.status = "retrying"

    def dead_letter(self, row: Any, answer: Answer) -> None:
        """Waits for a person now; the engine set the error."""
        row.status = self.dead_status
        row.next_attempt_at = None

    def rejected(self, row: Any, answer: Answer) -> None:
        row.failures += 1
        self.dead_letter(row, answer)

    def waiting(self, row: Any, answer: Answer) -> None:
        raise NotImplementedError

    def other(self, row: Any, answer: Answer) -> None:
        raise ValueError(f"{self.name}: unknown outcome {answer.outcome.kind!r}")

    def rows_save(self, rows: list[Any], now: datetime, *, claiming: bool = False) -> None:
        """All changed rows in one ``UPDATE`` (``updated_at`` set here: rows_update does
        not touch auto_now fields)."""
        for row in rows:
            row.updated_at = now
        own = self.claim_fields if claiming and self.claim_fields is not None else self.fields
        rows_update(rows, [*ENGINE_FIELDS, *own])

    # --- waking ------------------------------------------------------------------------------

    def wake(self, key: int, countdown: float | None = None) -> None:
        """Come back for this row (after the current transaction commits)."""
        raise NotImplementedError

    def ring(self, *, force: bool = False) -> None:
        """Make sure a drain is on its way (a backlog, a hand-over, the sweeper)."""
        raise NotImplementedError

    def sweep_wake(self, keys: list[int]) -> None:
        """The sweeper found these rows overdue: by default one drain takes them all."""
        self.ring(force=True)

    def drain_begin(self) -> None:
        """Before a drain's first claim (clear the doorbell, resume what a reconnect
        releases …)."""
        return None
