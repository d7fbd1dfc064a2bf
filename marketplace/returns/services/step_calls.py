"""One platform step's call (push a return, mark complete, report errors), and what came
of it, as an outbox ``Outcome`` for the return step kind (``steps.py``).

An errors call re-reads first (``errors_reread.py``): it is sent only while the platform
holds the version it judged; otherwise the outcome is ``superseded`` (dropped, the
decision cleared), or ``ok`` when the platform shows our earlier call went through.
"""

from __future__ import annotations

from marketplace.orders.models import OrderSync
from marketplace.orders.services.call_outcome import seller_call_outcome
from marketplace.outbox.outcomes import OK, Outcome
from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import PlatformStep, Return, SellerRefund, StepKind
from marketplace.returns.payloads import return_payload
from marketplace.returns.services.errors_reread import (
    ALREADY_PAUSED,
    refund_errors_stale,
    return_errors_stale,
)

# The step kind's own outcomes (besides the engine's).
SUPERSEDED = "superseded"
ORDER_NOT_ON_PLATFORM = "order_not_on_platform"


def step_call(client: OrderSourceClient, step: PlatformStep, *, connection_id: int) -> Outcome:
    """Make the step's call; what came of it."""
    return seller_call_outcome(
        lambda: _call(client, step), connection_id=connection_id, what=f"return step {step.pk}"
    )


def _call(client: OrderSourceClient, step: PlatformStep) -> Outcome | None:
    if step.kind == StepKind.PUSH_RETURN:
        return_request = Return.objects.select_related("order").get(pk=step.return_request_id or 0)
        pushed = (
            OrderSync.objects.filter(order_id=return_request.order_id)
            .values_list("pushed_version", flat=True)
            .first()
        )
        if not pushed:
            return Outcome(ORDER_NOT_ON_PLATFORM, "waiting for the order to reach the platform")
        client.put_return(
            return_request.order.mp_order_number,
            return_request.mp_return_number,
            return_payload(return_request),
        )
    elif step.kind in (StepKind.COMPLETE_RETURN, StepKind.REPORT_RETURN):
        return_request = Return.objects.select_related("order").get(pk=step.return_request_id or 0)
        number, ret = return_request.order.mp_order_number, return_request.mp_return_number
        if step.kind == StepKind.COMPLETE_RETURN:
            client.complete_return(number, ret)
        else:
            stale = return_errors_stale(client.get_return_refunds(number, ret), step)
            if stale:
                return Outcome(SUPERSEDED, stale)
            client.post_return_errors(number, ret, list(step.body or []))
    else:
        refund = SellerRefund.objects.select_related("order").get(pk=step.refund_id or 0)
        number = refund.order.mp_order_number
        if step.kind == StepKind.COMPLETE_REFUND:
            client.complete_refund(number, refund.refund_id)
        else:
            stale = refund_errors_stale(client.get_refund(number, refund.refund_id), step)
            if stale == ALREADY_PAUSED:
                return Outcome(OK, stale)
            if stale:
                return Outcome(SUPERSEDED, stale)
            client.post_refund_errors(number, refund.refund_id, list(step.body or []))
    return None
