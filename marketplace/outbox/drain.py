"""The outbox cycle: claim, send with no transaction open, record while the claim holds."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from marketplace.outbox.claim import Batch, claim
from marketplace.outbox.kind import OutboxKind
from marketplace.outbox.outcomes import UNSENT, Outcome
from marketplace.outbox.record import record
from marketplace.outbox.send import send

logger = logging.getLogger(__name__)


def cycle(kind: OutboxKind, batch: Batch) -> tuple[dict[int, str], dict[int, Outcome]]:
    """Send a claimed batch and record the answers: (status per key, outcome per key)."""
    if not batch.claims:
        return {}, {}
    outcomes = send(kind, batch.claims)
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
    """
    budget = kind.drain_seconds() if seconds is None else seconds
    batch_size = kind.batch_size()
    kind.drain_begin()  # before the first claim: a change committed after it rings again
    started = time.monotonic()
    claimed = 0
    while True:
        batch = claim(kind, limit=batch_size)
        if batch.looked_at == 0:
            return claimed
        if batch.looked_at == batch_size:
            kind.ring()  # there may be more: let an idle worker drain beside us
        claimed += len(batch.claims)
        _, outcomes = cycle(kind, batch)
        if batch.claims and all(o.kind == UNSENT for o in outcomes.values()):
            # Nothing could be sent within the lease (the lease is shorter than the call
            # budget): do not spin; the rows stay due for the next drain.
            logger.error("%s batch sent nothing: the lease is below the call budget", kind.name)
            return claimed
        if time.monotonic() - started > budget:
            # Hand over rather than hog the worker process; the rest stays due.
            kind.ring(force=True)
            return claimed
