"""The outbox of returns and refunds: calls the platform must get, run until done.

Each ``PlatformStep`` is written in the transaction that makes it necessary (a return
stored by intake → push it; a decision → mark complete or report errors), so none is
lost; on commit a wake-up is queued, and the beat sweeper drains whatever is due anyway
(a lost message only delays). Like the order push (``orders/services/push.py``): a
drain *claims* due rows in a short transaction (``SKIP LOCKED``, a lease), calls the
platform with no transaction open, and records each answer only while it still holds
the claim.

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

import logging
import secrets
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from marketplace.outbox.backoff import backoff_seconds, embargo_wait_seconds
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
from marketplace.returns.services.step_calls import step_call
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

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
WORKER_LOST = "the worker sending this step stopped before it recorded an answer"


def steps_wake() -> None:
    """Queue a drain once the current transaction commits."""
    from marketplace.returns.tasks import return_steps_drain_task  # tasks import services

    transaction.on_commit(return_steps_drain_task.delay)


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
    updated = PlatformStep.objects.filter(pk=step_id).exclude(status=StepStatus.DONE)
    changed = updated.update(
        status=StepStatus.PENDING,
        failures=0,
        next_attempt_at=timezone.now(),
        claim_token="",
        lease_until=None,
        updated_at=timezone.now(),
    )
    if changed:
        steps_wake()
    return bool(changed)


# --- the drain ----------------------------------------------------------------------------


def _due(now: datetime) -> Q:
    return Q(status__in=OPEN, next_attempt_at__lte=now) & (
        Q(claim_token="") | Q(lease_until__lt=now)
    )


def _claim(*, step_ids: list[int] | None, limit: int) -> tuple[str, list[PlatformStep]]:
    now = timezone.now()
    token = secrets.token_hex(16)
    with transaction.atomic():
        query = PlatformStep.objects.select_for_update(skip_locked=True).filter(_due(now))
        if step_ids is not None:
            query = query.filter(pk__in=step_ids)
        steps = list(query.order_by("next_attempt_at", "id")[:limit])
        for step in steps:
            if step.claim_token:  # the last claim's lease ran out unanswered: a lost worker
                step.failures += 1
                step.last_error = WORKER_LOST
                if step.failures >= settings.RETURN_STEP_MAX_FAILURES:
                    step.status = StepStatus.FAILED
                    step.next_attempt_at = None
                    step.claim_token = ""
                    step.lease_until = None
                    continue
            step.claim_token = token
            step.lease_until = now + timedelta(seconds=settings.RETURN_STEP_LEASE_SECONDS)
            step.attempts += 1
        PlatformStep.objects.bulk_update(
            steps,
            [
                "claim_token",
                "lease_until",
                "attempts",
                "failures",
                "last_error",
                "status",
                "next_attempt_at",
            ],
        )
    return token, [step for step in steps if step.status != StepStatus.FAILED]


def return_steps_drain(*, step_ids: list[int] | None = None, rounds: int = 20) -> int:
    """Run due steps in batches (or only ``step_ids``); returns how many were run."""
    ran = 0
    _reconnected_resume()
    for _ in range(rounds):
        token, steps = _claim(step_ids=step_ids, limit=settings.RETURN_STEP_BATCH_SIZE)
        if not steps:
            break
        by_seller: dict[int, list[PlatformStep]] = defaultdict(list)
        for step in steps:
            by_seller[step.seller_id].append(step)
        for seller_id, seller_steps in by_seller.items():
            _run_seller_steps(seller_id, seller_steps, token)
        ran += len(steps)
        if step_ids is not None:
            break
    return ran


def _reconnected_resume() -> int:
    """Dead letters that gave up waiting for a seller's connection, due again now that it
    is connected (the drain runs every 30 s from beat, so a reconnect is seen soon)."""
    changed = PlatformStep.objects.filter(
        status=StepStatus.FAILED,
        last_error=CONNECTION_DEAD_LETTER,
        seller__connection__state=PlatformConnection.State.CONNECTED,
    ).update(
        status=StepStatus.PENDING,
        failures=0,
        next_attempt_at=timezone.now(),
        updated_at=timezone.now(),
    )
    return changed


def _run_seller_steps(seller_id: int, steps: list[PlatformStep], token: str) -> None:
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    if connection is None or not connection.is_live:
        for step in steps:
            _record(step, token, "waiting", "the seller's platform connection is not live")
        return
    client = order_client_for(connection)
    held: tuple[str, str, float | None] | None = None
    for step in sorted(steps, key=lambda s: s.id):
        if held is not None:  # a 429 or a lost grant holds the seller's other steps
            _record(step, token, held[0], held[1], retry_after=held[2])
            continue
        kind, message, status, retry_after = step_call(client, step)
        _record(step, token, kind, message, status=status, retry_after=retry_after)
        if kind in ("rate_limited", "waiting"):
            held = (kind, message, retry_after)


def _record(
    step: PlatformStep,
    token: str,
    kind: str,
    message: str,
    *,
    status: int | None = None,
    retry_after: float | None = None,
) -> None:
    now = timezone.now()
    with transaction.atomic():
        locked = PlatformStep.objects.select_for_update().filter(pk=step.pk, claim_token=token)
        row = locked.first()
        if row is None:
            return  # our lease ran out and another drain has it now
        row.claim_token = ""
        row.lease_until = None
        row.last_error = message[:2000]
        row.last_error_status = status
        if kind == "ok":
            row.status = StepStatus.DONE
            row.done_at = now
            row.next_attempt_at = None
            _after_done(row)
        elif kind == "superseded":
            row.status = StepStatus.SUPERSEDED
            row.done_at = now
            row.next_attempt_at = None
            decision_drop(row)
        elif kind == "order_not_on_platform":
            row.status = StepStatus.PENDING
            row.attempts = max(0, row.attempts - 1)
            row.next_attempt_at = now + timedelta(seconds=settings.RETURN_PUSH_ORDER_WAIT_SECONDS)
        elif kind == "waiting":
            # Counted with the failures: a connection that never comes back must not keep
            # the step (and the drain) busy for ever.
            row.failures += 1
            if row.failures >= settings.RETURN_STEP_MAX_CONNECTION_WAITS:
                row.status = StepStatus.FAILED
                row.last_error = CONNECTION_DEAD_LETTER
                row.next_attempt_at = None
            else:
                row.status = StepStatus.RETRYING
                wait = min(
                    WAIT_FOR_CONNECTION_SECONDS * 2 ** (row.failures - 1),
                    WAIT_FOR_CONNECTION_CEILING_SECONDS,
                )
                row.next_attempt_at = now + timedelta(seconds=wait)
        elif kind == "rate_limited":
            row.status = StepStatus.RETRYING
            row.next_attempt_at = now + timedelta(seconds=embargo_wait_seconds(retry_after))
        else:
            row.failures += 1
            if kind == "rejected" or row.failures >= settings.RETURN_STEP_MAX_FAILURES:
                row.status = StepStatus.FAILED
                row.next_attempt_at = None
            else:
                row.status = StepStatus.RETRYING
                base, cap = settings.PUSH_BACKOFF_BASE, settings.PUSH_BACKOFF_CAP
                wait = max(backoff_seconds(row.failures, base=base, cap=cap), retry_after or 0.0)
                row.next_attempt_at = now + timedelta(seconds=wait)
        row.save()


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
