"""Issue 30, point 9: a return step's retries have a cap and end in a dead letter staff see.

* A step of a seller whose connection is not live waits, longer each time, then is a
  dead letter (on the staff page of platform calls that need a person), and goes again
  by itself once the seller is connected.
* A step whose worker died while sending (its lease ran out unanswered) counts that as
  a failure: it is not claimed for ever.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.returns.models import PlatformStep
from marketplace.returns.services import steps
from marketplace.returns.services.steps import return_steps_drain
from sellers.models import PlatformConnection
from tests.marketplace.returns.conftest import FakeOrderSource, shipped_order
from tests.marketplace.returns.test_steps import due_now, make_return
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db


def test_steps_of_a_seller_not_connected_give_up_then_resume_on_reconnect(
    fake_platform: FakeOrderSource, wakes: list[str], settings: Any, staff_client: Client
) -> None:
    settings.RETURN_STEP_MAX_CONNECTION_WAITS = 4
    order = shipped_order()
    make_return(order)
    PlatformConnection.objects.filter(seller=order.seller).update(
        state=PlatformConnection.State.NEEDS_REAUTH
    )
    waits = []
    for _ in range(3):
        return_steps_drain()
        step = PlatformStep.objects.get()
        assert step.status == "retrying"
        waits.append(round((step.next_attempt_at - timezone.now()).total_seconds() / 60))
        due_now()
    # Waits double (1, 2, 4 minutes), not every 60 s for ever.
    assert waits == [1, 2, 4]
    return_steps_drain()
    step = PlatformStep.objects.get()
    assert (step.status, step.next_attempt_at) == ("failed", None)
    assert step.last_error == steps.CONNECTION_DEAD_LETTER
    assert fake_platform.names() == []
    # Staff see it among the platform calls that need a person.
    page = page_text(staff_client.get("/dashboard/returns/"))
    assert "gave up waiting; sent again once the seller reconnects" in page
    assert order.mp_order_number in page
    # Nothing runs while the seller stays away.
    return_steps_drain()
    assert PlatformStep.objects.get().status == "failed"

    # The seller reconnects: the next drain (beat's, every 30 s) sends it.
    PlatformConnection.objects.filter(seller=order.seller).update(
        state=PlatformConnection.State.CONNECTED
    )
    return_steps_drain()
    step = PlatformStep.objects.get()
    assert (step.status, step.failures) == ("done", 0)
    assert fake_platform.names() == ["put_return"]


class WorkerDied(BaseException):
    """The worker process ending in the middle of a call (nothing after it runs)."""


def test_a_step_whose_worker_keeps_dying_becomes_a_dead_letter(
    fake_platform: FakeOrderSource, wakes: list[str], settings: Any
) -> None:
    settings.RETURN_STEP_MAX_FAILURES = 3
    order = shipped_order()
    make_return(order)
    for _ in range(3):
        fake_platform.fail["put_return"] = [WorkerDied()]
        with pytest.raises(WorkerDied):
            return_steps_drain()
        # The claim's lease runs out with no answer recorded.
        PlatformStep.objects.update(
            lease_until=timezone.now() - timedelta(seconds=1),
            next_attempt_at=timezone.now() - timedelta(seconds=1),
        )
    assert len(fake_platform.calls) == 3
    return_steps_drain()
    step = PlatformStep.objects.get()
    assert (step.status, step.failures, step.next_attempt_at) == ("failed", 3, None)
    assert step.last_error == steps.WORKER_LOST
    assert step.claim_token == ""
    assert len(fake_platform.calls) == 3  # not sent a fourth time
