"""The outbox cycle: claim, send with no transaction open, record while the claim holds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from marketplace.outbox.claim import Batch, claim, release
from marketplace.outbox.kind import OutboxKind
from marketplace.outbox.outcomes import UNSENT, Outcome
from marketplace.outbox.record import record
from marketplace.outbox.send import Sending, send, send_start

logger = logging.getLogger(__name__)


def cycle(kind: OutboxKind, batch: Batch) -> tuple[dict[int, str], dict[int, Outcome]]:
    """Send a claimed batch and record the answers: (status per key, outcome per key)."""
    if not batch.claims:
        return {}, {}
    outcomes = send(kind, batch.claims, leased_at=batch.leased_at)
    return record(kind, batch.claims, outcomes), outcomes


def run(
    kind: OutboxKind, *, keys: Iterable[int], force: bool = False, wait: bool = True
) -> dict[int, str]:
    """Send these rows' work now where it is due (``force``: even dead letters and rows
    not due yet). Returns each row's status afterwards ("skipped": nothing to do)."""
    batch = claim(kind, keys=list(keys), force=force, wait=wait)
    return {**batch.verdicts, **cycle(kind, batch)[0]}


def drain(kind: OutboxKind, *, seconds: float | None = None) -> int:
    """Send due rows in batches until none is left or ``seconds`` have passed.

    Returns how many rows were claimed. Runs side by side with other drains.

    A kind that ``sends_ahead`` keeps its calls going through a backlog: while a full
    batch's calls are in flight (in the sender threads), this thread records the batch
    before it and, once the batch's last quarter of calls is under way, claims the next
    one. Claiming and recording cost about a tenth of a batch's time with the calls
    stopped (docs/benchmarks.md, P1). Only the database work overlaps: the next batch's
    calls start after this one's have all ended, so a 429 or a dead grant met here still
    holds the seller's calls in the next batch.
    """
    budget = kind.drain_seconds() if seconds is None else seconds
    batch_size = kind.batch_size()
    kind.drain_begin()  # before the first claim: a change committed after it rings again
    started = time.monotonic()
    claimed = 0
    # Each batch goes from claimed (``unsent``) to its calls started (``flying``) to
    # answered (``answered``) to recorded; a drain that raises cleans up each stage.
    unsent: Batch | None = claim(kind, limit=batch_size)
    flying: tuple[Batch, Sending] | None = None
    answered: tuple[Batch, Sending] | None = None  # every call ended, not yet recorded
    try:
        while unsent is not None and unsent.looked_at:
            batch, unsent = unsent, None
            full = batch.looked_at == batch_size
            claimed += len(batch.claims)
            ahead = kind.sends_ahead and full
            sending = send_start(kind, batch.claims, leased_at=batch.leased_at, in_background=ahead)
            flying = (batch, sending)
            if full:
                kind.ring()  # there may be more: let an idle worker drain beside us
            if answered is not None:
                _record_sent(kind, *answered)
                answered = None
            if ahead and time.monotonic() - started <= budget:
                # Claimed near the end of this batch's calls, not at their start: the next
                # batch's lease (and its window to start calls in) runs from its claim, and
                # a batch slowed by timeouts would otherwise eat into it.
                sending.wait_until_left(max(kind.send_concurrency(), len(batch.claims) // 4))
                unsent = claim(kind, limit=batch_size)
            outcomes = sending.outcomes()
            answered, flying = (batch, sending), None
            if batch.claims and all(o.kind == UNSENT for o in outcomes.values()):
                # Nothing could be sent within the lease: do not spin; the rows stay due
                # (and are woken) for the next drain.
                logger.error(
                    "%s batch sent nothing: no call could start within its lease (a lease "
                    "below the call budget, or a batch before it slowed by timeouts)",
                    kind.name,
                )
                break
            if unsent is None:
                _record_sent(kind, *answered)
                answered = None
                if time.monotonic() - started > budget:
                    # Hand over rather than hog the worker process; the rest stays due.
                    kind.ring(force=True)
                    return claimed
                unsent = claim(kind, limit=batch_size)
            # else: this batch is recorded while the next one's calls are in flight
        if answered is not None:
            _record_sent(kind, *answered)
            answered = None
        if unsent is not None and unsent.claims:
            release(kind, unsent, sent=False)  # claimed ahead, never sent: due again now
        return claimed
    except BaseException:
        _drain_abandoned(kind, unsent, flying, answered)
        raise


def _record_sent(kind: OutboxKind, batch: Batch, sending: Sending) -> None:
    """Wait for the batch's calls to end, write their call records, then its answers.

    The records are written only after the wait (even when a call raised): a record
    collected after the write would never be written."""
    try:
        outcomes = sending.outcomes()
    finally:
        sending.calls_write()
    record(kind, batch.claims, outcomes)


def _drain_abandoned(
    kind: OutboxKind,
    unsent: Batch | None,
    flying: tuple[Batch, Sending] | None,
    answered: tuple[Batch, Sending] | None,
) -> None:
    """What a drain that raised leaves behind: answers are recorded, calls in flight
    awaited and recorded, a batch never sent given back (due again at once, not after its
    lease). A step that fails is logged and leaves its rows to their lease (counted as a
    lost worker's attempt), the others still run."""
    steps: list[tuple[str, Callable[[], object]]] = []
    if answered is not None:
        steps.append(("record", lambda: _record_sent(kind, *answered)))
    if flying is not None:
        steps.append(("record", lambda: _record_sent(kind, *flying)))
    if unsent is not None and unsent.claims:
        steps.append(("give back", lambda: release(kind, unsent, sent=False)))
    for what, step in steps:
        try:
            step()
        except Exception:
            logger.exception("%s drain: could not %s a batch", kind.name, what)
