"""One platform step's call (push a return, mark complete, report errors), and what came
of it: ``(outcome, message, HTTP status, retry_after)`` for ``steps._record``.

An errors call re-reads first (``errors_reread.py``): it is sent only while the platform
holds the version it judged; otherwise the outcome is ``superseded`` (dropped, the
decision cleared), or ``ok`` when the platform shows our earlier call went through.
"""

from __future__ import annotations

import logging

from marketplace.orders.models import OrderSync
from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformError,
    PlatformRateLimited,
    PlatformRejected,
)
from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import PlatformStep, Return, SellerRefund, StepKind
from marketplace.returns.payloads import return_payload
from marketplace.returns.services.errors_reread import (
    ALREADY_PAUSED,
    refund_errors_stale,
    return_errors_stale,
)
from sellers.errors import ConnectionNotLive, SellerConnectionError

logger = logging.getLogger(__name__)


def step_call(
    client: OrderSourceClient, step: PlatformStep
) -> tuple[str, str, int | None, float | None]:
    """(outcome, message, HTTP status, retry_after) of one step's call."""
    try:
        if step.kind == StepKind.PUSH_RETURN:
            return_request = Return.objects.select_related("order").get(
                pk=step.return_request_id or 0
            )
            pushed = (
                OrderSync.objects.filter(order_id=return_request.order_id)
                .values_list("pushed_version", flat=True)
                .first()
            )
            if not pushed:
                return (
                    "order_not_on_platform",
                    "waiting for the order to reach the platform",
                    None,
                    None,
                )
            client.put_return(
                return_request.order.mp_order_number,
                return_request.mp_return_number,
                return_payload(return_request),
            )
        elif step.kind in (StepKind.COMPLETE_RETURN, StepKind.REPORT_RETURN):
            return_request = Return.objects.select_related("order").get(
                pk=step.return_request_id or 0
            )
            number, ret = return_request.order.mp_order_number, return_request.mp_return_number
            if step.kind == StepKind.COMPLETE_RETURN:
                client.complete_return(number, ret)
            else:
                current = client.get_return_refunds(number, ret)
                stale = return_errors_stale(current, step)
                if stale:
                    return "superseded", stale, None, None
                client.post_return_errors(number, ret, list(step.body or []))
        else:
            refund = SellerRefund.objects.select_related("order").get(pk=step.refund_id or 0)
            number = refund.order.mp_order_number
            if step.kind == StepKind.COMPLETE_REFUND:
                client.complete_refund(number, refund.refund_id)
            else:
                current = client.get_refund(number, refund.refund_id)
                stale = refund_errors_stale(current, step)
                if stale == ALREADY_PAUSED:
                    return "ok", stale, None, None
                if stale:
                    return "superseded", stale, None, None
                client.post_refund_errors(number, refund.refund_id, list(step.body or []))
    except ConnectionNotLive as exc:
        return "waiting", str(exc) or "connection not live", None, None
    except SellerConnectionError as exc:
        return "transient", str(exc), None, None
    except PlatformRateLimited as exc:
        return "rate_limited", exc.message, exc.status, exc.retry_after
    except PlatformRejected as exc:
        return "rejected", exc.message, exc.status, None
    except PlatformAuthError as exc:
        return "transient", exc.message, exc.status, None
    except PlatformError as exc:
        return "transient", exc.message, exc.status, exc.retry_after
    except Exception as exc:
        logger.exception("unexpected error in return step %s", step.pk)
        return "transient", f"unexpected error: {exc!r}", None, None
    return "ok", "", None, None
