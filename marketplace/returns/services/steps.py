"""The outbox of returns and refunds: calls the platform must get, run until done.

Each ``PlatformStep`` is written in the transaction that makes it necessary (a return
stored by intake → push it; a decision → mark complete or report errors), so none is
lost; on commit a wake-up is queued, and the beat sweeper drains whatever is due anyway
(a lost message only delays). The return step kind of the outbox engine
(``marketplace.outbox``), like the order push: a drain *claims* due rows in a short
transaction (``SKIP LOCKED``, a lease), calls the platform with no transaction open, and
records the answers only while it still holds the claim.

* A return's push waits until its order is on the platform (``OrderSync.pushed_version``):
  never overtaken by its own order.
* A 429 (or a held embargo) comes back when the platform said, not counted as a failure;
  other transient failures back off (``outbox.backoff``) and, after
  ``RETURN_STEP_MAX_FAILURES``, the step is a dead letter staff can retry; a 4xx is a dead
  letter at once (the platform refuses the call as it is). A claim whose worker died
  before recording an answer (its lease ran out) counts as a failure too.
* A seller whose connection is not live: the step waits, doubling from a minute up to an
  hour, ``RETURN_STEP_MAX_CONNECTION_WAITS`` times; then it is a dead letter staff see,
  which resumes by itself once the seller's connection is back (``_reconnected_resume``).
  These waits have no jitter: they wait for the seller, not for a loaded platform.
* Every call is idempotent at the platform (PUT of the same body, ``complete`` once
  complete, the same errors body again), so a step whose answer was lost is simply sent
  again.
* An errors call re-reads first (TRAPS.md: a blind retry paused a corrected refund with
  the old errors). Errors belong to the version they judged: the refund (or the return's
  refund amounts) is read, and the call is sent only while the platform still holds the
  lines the decision judged and the record is still ``CREATED`` (``REFUNDED``). Already
  ``PAUSED`` on those lines: our earlier call went through, its answer was lost (done).
  Anything else: the call is dropped (``SUPERSEDED``) and the decision cleared, so the
  next pull decides the current version.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, cast

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from marketplace.enqueue import task_enqueue
from marketplace.outbox import drain
from marketplace.outbox.backoff import backoff_seconds
from marketplace.outbox.claim import MAX_COUNTDOWN_SECONDS
from marketplace.outbox.kind import Answer, Claim, Journal, OutboxKind, Tuning
from marketplace.outbox.outcomes import WORKER_LOST, Outcome
from marketplace.outbox.sweep import due_again
from marketplace.returns.models import (
    PlatformStep,
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
    StepKind,
    StepStatus,
)
from marketplace.returns.services.errors_reread import decision_drop
from marketplace.returns.services.step_calls import ORDER_NOT_ON_PLATFORM, SUPERSEDED, step_call
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

__all__ = ["WORKER_LOST", "return_steps_drain", "step_add", "step_retry"]

RETURN_STEPS_DRAIN_TASK = "marketplace.returns.tasks.return_steps_drain_task"
OPEN = (StepStatus.PENDING, StepStatus.RETRYING)
# A seller whose connection is not live: look again after this long, doubling up to the
# ceiling; after RETURN_STEP_MAX_CONNECTION_WAITS looks the step is a dead letter.
WAIT_FOR_CONNECTION_SECONDS = 60.0
WAIT_FOR_CONNECTION_CEILING_SECONDS = 3600.0
# The dead letter's last_error: how the resume finds it again when the seller reconnects.
CONNECTION_DEAD_LETTER = (
    "the seller's platform connection is not live: gave up waiting; "
    "sent again once the seller reconnects"
)


def steps_wake() -> None:
    """Queue a drain once the current transaction commits."""
    task_enqueue(RETURN_STEPS_DRAIN_TASK)


def step_add(
    *,
    kind: str,
    seller_id: int,
    return_id: int | None = None,
    refund_id: int | None = None,
    body: Any = None,
    version: int = 1,
    judged_digest: str = "",
) -> PlatformStep:
    """The step ``kind`` of this return or refund (of this refund ``version``), due now
    (once: a second add of the same kind returns the first, unless that one was dropped as
    superseded: then it is armed again for the new decision). Call inside the transaction
    that makes it necessary."""
    lookup: dict[str, Any] = {"kind": kind, "return_request_id": return_id, "refund_id": refund_id}
    if refund_id is not None:
        lookup["version"] = version
    now = timezone.now()
    fresh = {"body": body, "judged_digest": judged_digest, "next_attempt_at": now}
    step, created = PlatformStep.objects.get_or_create(
        **lookup, defaults={"seller_id": seller_id, "version": version, **fresh}
    )
    if not created and step.status == StepStatus.SUPERSEDED:
        for name, value in fresh.items():
            setattr(step, name, value)
        step.status = StepStatus.PENDING
        step.failures = 0
        step.done_at = None
        step.save()
        created = True
    if created:
        steps_wake()
    return step


def step_retry(*, step_id: int) -> bool:
    """Staff's retry of a dead letter (or a waiting step): due now, failures forgotten."""
    rows = PlatformStep.objects.filter(pk=step_id).exclude(status=StepStatus.DONE)
    changed = due_again(RETURN_STEP, rows)
    if changed:
        steps_wake()
    return bool(changed)


class ReturnStepKind(OutboxKind):
    """A return's or a refund's call: one row per call, sent in order per seller."""

    name = "return step"
    model = PlatformStep
    open_statuses = OPEN
    dead_status = StepStatus.FAILED
    # Its own lease, batch and limit; the pushes' drain time and backoff.
    tuning = replace(
        Tuning.named("RETURN_STEP"),
        drain="PUSH_DRAIN_SECONDS",
        backoff_base="PUSH_BACKOFF_BASE",
        backoff_cap="PUSH_BACKOFF_CAP",
    )
    fields: ClassVar[list[str]] = ["status", "done_at"]

    def call_budget_seconds(self) -> float:
        # An errors call reads before it writes: two calls, each possibly refreshing.
        return 4 * (settings.PLATFORM_CONNECT_TIMEOUT + settings.PLATFORM_READ_TIMEOUT)

    def skip(self, row: Any, now: datetime, force: bool, changed: list[Any]) -> str | None:
        return None if row.status in OPEN else "closed"

    def prepare(
        self, rows: list[Any], token: str, now: datetime, journal: Journal
    ) -> tuple[list[Claim], dict[int, str]]:
        claims = [Claim(row.pk, row.pk, row.seller_id, token, row.version, row) for row in rows]
        return claims, {}

    def group_open(self, group: int, claims: list[Claim]) -> Any:
        connection = PlatformConnection.objects.filter(seller_id=group).first()
        if connection is None or not connection.is_live:
            return Outcome("waiting", "the seller's platform connection is not live")
        return (order_client_for(connection), connection.pk)

    def order(self, claims: list[Claim]) -> list[Claim]:
        # A seller's calls in the order they were made necessary (a return is pushed
        # before it is marked complete).
        return sorted(claims, key=lambda c: (c.group, c.pk))

    def send_one(self, client: Any, claim: Claim) -> Outcome:
        source, connection_id = client
        return step_call(source, cast(PlatformStep, claim.data), connection_id=connection_id)

    def done(self, row: Any, answer: Answer) -> None:
        step = cast(PlatformStep, row)
        step.last_error = answer.outcome.message[:2000]
        step.last_error_status = None
        step.status = StepStatus.DONE
        step.done_at = answer.now
        step.next_attempt_at = None
        _after_done(step)

    def waiting(self, row: Any, answer: Answer) -> None:
        # Counted with the failures: a connection that never comes back must not keep
        # the step (and the drain) busy for ever.
        step = cast(PlatformStep, row)
        step.failures += 1
        step.last_error = answer.outcome.message[:2000]
        step.last_error_status = answer.outcome.status
        if step.failures >= settings.RETURN_STEP_MAX_CONNECTION_WAITS:
            step.status = StepStatus.FAILED
            step.last_error = CONNECTION_DEAD_LETTER
            step.next_attempt_at = None
            return
        step.status = StepStatus.RETRYING
        wait = backoff_seconds(
            step.failures,
            base=WAIT_FOR_CONNECTION_SECONDS,
            cap=WAIT_FOR_CONNECTION_CEILING_SECONDS,
            rand=lambda: 1.0,  # no jitter (see the module docstring)
        )
        step.next_attempt_at = answer.now + timedelta(seconds=wait)

    def other(self, row: Any, answer: Answer) -> None:
        step, outcome = cast(PlatformStep, row), answer.outcome
        step.last_error = outcome.message[:2000]
        step.last_error_status = outcome.status
        if outcome.kind == SUPERSEDED:
            step.status = StepStatus.SUPERSEDED
            step.done_at = answer.now
            step.next_attempt_at = None
            decision_drop(step)
        elif outcome.kind == ORDER_NOT_ON_PLATFORM:
            step.status = StepStatus.PENDING
            step.attempts = max(0, step.attempts - 1)
            wait = float(settings.RETURN_PUSH_ORDER_WAIT_SECONDS)
            step.next_attempt_at = answer.now + timedelta(seconds=wait)
            self.wake(step.pk, countdown=wait)
        else:
            super().other(row, answer)

    def wake(self, key: int, countdown: float | None = None) -> None:
        if not countdown:
            steps_wake()
        elif countdown <= MAX_COUNTDOWN_SECONDS:
            task_enqueue(RETURN_STEPS_DRAIN_TASK, countdown=countdown)

    def ring(self, *, force: bool = False) -> None:
        steps_wake()

    def drain_begin(self) -> None:
        _reconnected_resume()


RETURN_STEP = ReturnStepKind()


def return_steps_drain(*, step_ids: list[int] | None = None) -> int:
    """Run due steps in batches (or only ``step_ids``); returns how many were run."""
    if step_ids is not None:
        _reconnected_resume()
        statuses = drain.run(RETURN_STEP, keys=step_ids)
        return sum(1 for status in statuses.values() if status != "skipped")
    return drain.drain(RETURN_STEP)


def _reconnected_resume() -> int:
    """Dead letters that gave up waiting for a seller's connection, due again now that it
    is connected (the drain runs every 30 s from beat, so a reconnect is seen soon)."""
    rows = PlatformStep.objects.filter(
        status=StepStatus.FAILED,
        last_error=CONNECTION_DEAD_LETTER,
        seller__connection__state=PlatformConnection.State.CONNECTED,
    )
    return due_again(RETURN_STEP, rows)


def _after_done(step: PlatformStep) -> None:
    """What a step's success tells us about its return or refund (we made that change)."""
    if step.kind == StepKind.COMPLETE_RETURN:
        Return.objects.filter(pk=step.return_request_id or 0).update(
            status=ReturnStatus.COMPLETED, updated_at=timezone.now()
        )
    elif step.kind == StepKind.COMPLETE_REFUND:
        SellerRefund.objects.filter(pk=step.refund_id or 0).update(
            status=RefundStatus.COMPLETE, updated_at=timezone.now()
        )
    elif step.kind == StepKind.REPORT_REFUND:
        # Paused by our errors (this version only: a later one is not touched).
        now = timezone.now()
        SellerRefund.objects.filter(pk=step.refund_id or 0, version=step.version).exclude(
            status=RefundStatus.PAUSED
        ).update(
            status=RefundStatus.PAUSED,
            pause_count=F("pause_count") + 1,
            paused_at=now,
            updated_at=now,
        )
