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

from django.db.models import Q

from marketplace.db import rows_update
from marketplace.outbox.backoff import backoff_seconds
from marketplace.outbox.models import OutboxItem

# Outcomes every kind shares; a kind may add its own (``OutboxKind.other``).
OK = "ok"
UNSENT = "unsent"  # not started: the lease would have run out first
WAITING = "waiting"  # the seller's connection (or the API user's sign-in) is not live
TRANSIENT = "transient"  # 5xx, timeout, unreadable answer: back off, bounded
RATE_LIMITED = "rate_limited"  # 429: the platform's wait, not counted
REJECTED = "rejected"  # 4xx: the platform refuses the call as it is
SKIPPED = "skipped"
WORKER_LOST = "the worker sending this stopped before it recorded an answer"


@dataclass(frozen=True)
class Outcome:
    kind: str
    message: str = ""
    status: int | None = None
    retry_after: float | None = None
    response: dict[str, Any] | None = None
    # The kind's own account of the call (e.g. what an EDRTS drain sent).
    detail: Any = None


@dataclass(frozen=True)
class Claim:
    """One claimed row: what the sender needs, without touching the database."""

    pk: int
    key: int  # what callers name the row by (an order's id, a step's id, a seller's id)
    group: int  # whose calls these are (a seller): a 429 or a dead grant holds the group
    token: str
    version: int
    data: Any  # the kind's payload (order number and body, the step row, …)


class Journal(Protocol):
    """What a kind writes beside its rows in one transaction (events), flushed at its end."""

    def write(self) -> None: ...


class NoJournal:
    def write(self) -> None:
        return None


class OutboxKind:
    """The base of every kind; defaults suit a kind with a ``status`` field."""

    name: ClassVar[str]
    model: ClassVar[type[OutboxItem]]
    # The fields a batch writes back (rows_update does not touch auto_now fields).
    fields: ClassVar[list[str]]
    open_statuses: ClassVar[tuple[str, ...]] = ()
    dead_status: ClassVar[str] = "failed"
    # Floor of a 429's wait (seconds): the platform's Retry-After is whole seconds.
    embargo_min_seconds: ClassVar[float] = 1.0

    # --- tuning (read at call time: tests override settings) ---------------------------

    def lease_seconds(self) -> float:
        raise NotImplementedError

    def batch_size(self) -> int:
        raise NotImplementedError

    def drain_seconds(self) -> float:
        raise NotImplementedError

    def max_failures(self) -> int:
        raise NotImplementedError

    def backoff_base_cap(self) -> tuple[float, float]:
        raise NotImplementedError

    def backoff(self, failures: int) -> float:
        base, cap = self.backoff_base_cap()
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

    def done(
        self, row: Any, claim: Claim, outcome: Outcome, now: datetime, journal: Journal
    ) -> None:
        raise NotImplementedError

    def retrying(
        self,
        row: Any,
        claim: Claim | None,
        outcome: Outcome,
        delay: float,
        counts: bool,
        journal: Journal,
    ) -> None:
        """Status and history of a retry; the engine set the time and the error."""
        row.status = "retrying"

    def dead_letter(
        self, row: Any, claim: Claim | None, outcome: Outcome, journal: Journal
    ) -> None:
        """Waits for a person now; the engine set the error."""
        row.status = self.dead_status
        row.next_attempt_at = None

    def rejected(
        self, row: Any, claim: Claim, outcome: Outcome, now: datetime, journal: Journal
    ) -> None:
        row.failures += 1
        self.dead_letter(row, claim, outcome, journal)

    def waiting(
        self, row: Any, claim: Claim, outcome: Outcome, now: datetime, journal: Journal
    ) -> None:
        raise NotImplementedError

    def other(
        self, row: Any, claim: Claim, outcome: Outcome, now: datetime, journal: Journal
    ) -> None:
        raise ValueError(f"{self.name}: unknown outcome {outcome.kind!r}")

    def rows_save(self, rows: list[Any], now: datetime) -> None:
        """All changed rows in one ``UPDATE`` (``updated_at`` set here: rows_update does
        not touch auto_now fields)."""
        for row in rows:
            row.updated_at = now
        rows_update(rows, self.fields)

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
