"""The staff side of reconciliation: Reconcile now on the seller page (a real pass over
the sandbox, run eagerly), the findings page with both versions, settling an open
finding (who, when, the note), the overview's panel; staff only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.orders.services.push import order_push
from marketplace.reconcile import kinds, services
from marketplace.reconcile.models import Finding, ReconcileRun
from marketplace.reconcile.schedule import SELLER_RECONCILE_TASK
from marketplace.reconcile.tasks import seller_reconcile_task
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform, page_text

pytestmark = pytest.mark.django_db


def drift(platform: Platform, number: str, kind: str, **body: Any) -> dict[str, Any]:
    return platform.sandbox.control("POST", f"/orders/{number}/drift", {"kind": kind, **body})


@pytest.fixture
def conflict(platform: Platform, connected_seller: Any, quiet_broker: Any) -> Any:
    """An order support cancelled at the platform, which we hold awaiting shipment."""
    order = make_order("MP-STAFF")
    assert order_push(order_id=order.id) == "synced"
    drift(platform, "MP-STAFF", "order_state", marketplace_state="CANCELLED")
    return connected_seller


def test_reconcile_now_runs_a_pass_and_the_findings_page_shows_both_versions(
    conflict: Any, staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The queued task runs at once, as a worker would (task_enqueue sends by name).
    queued: list[tuple[str, tuple[Any, ...]]] = []

    def worker(name: str, *args: Any, **options: Any) -> None:
        queued.append((name, args))
        seller_reconcile_task(*args)

    monkeypatch.setattr(services, "task_enqueue", worker)
    seller_page = page_text(staff_client.get(f"/dashboard/sellers/{conflict.id}/"))
    assert 'id="reconcile-button"' in seller_page
    assert "Not reconciled yet." in seller_page
    response = staff_client.post(f"/dashboard/sellers/{conflict.id}/reconcile/", {"confirmed": ""})
    assert response.status_code == 302
    assert queued == [(SELLER_RECONCILE_TASK, (conflict.id, "staff", "staff"))]
    assert response["Location"] == f"/dashboard/sellers/{conflict.id}/"
    run = ReconcileRun.objects.get(seller=conflict)
    assert (run.trigger, run.actor, run.findings_count, run.error) == ("staff", "staff", 1, "")
    messages = page_text(staff_client.get(f"/dashboard/sellers/{conflict.id}/"))
    assert "Reconciled: 1 finding(s)." in messages
    assert "1 finding waits for you." in messages
    page = page_text(staff_client.get("/dashboard/reconcile/?status=open"))
    assert "Order state differs (both sides moved)" in page
    assert "MP-STAFF" in page
    assert "&quot;state&quot;: &quot;AWAITING_SHIPMENT&quot;" in page  # ours
    assert "&quot;marketplace_state&quot;: &quot;CANCELLED&quot;" in page  # the platform's
    overview = page_text(staff_client.get("/dashboard/"))
    assert 'id="reconcile-panel"' in overview
    assert "Order state differs (both sides moved): 1 in 24 h, 1 open" in overview


def test_staff_settle_an_open_finding_with_a_note(conflict: Any, staff_client: Client) -> None:
    from marketplace.reconcile.models import RunTrigger
    from marketplace.reconcile.seller_pass import seller_reconcile

    seller_reconcile(seller_id=conflict.id, trigger=RunTrigger.COMMAND)
    finding = Finding.objects.get(kind=kinds.ORDER_STATE_CONFLICT)
    url = f"/dashboard/reconcile/findings/{finding.id}/settle/"
    # a note is required
    staff_client.post(url, {"confirmed": "yes", "note": ""})
    finding.refresh_from_db()
    assert finding.status == "open"
    response = staff_client.post(
        url, {"confirmed": "yes", "note": "Support cancelled it: cancelled here too."}
    )
    assert response.status_code == 302
    finding.refresh_from_db()
    assert (finding.status, finding.settled_by, finding.staff_note) == (
        "settled",
        "staff",
        "Support cancelled it: cancelled here too.",
    )
    assert finding.settled_at is not None
    page = page_text(staff_client.get("/dashboard/reconcile/?status=settled"))
    assert "Settled by staff" in page
    # settling again changes nothing
    staff_client.post(url, {"confirmed": "yes", "note": "again"})
    finding.refresh_from_db()
    assert finding.staff_note == "Support cancelled it: cancelled here too."


def test_the_findings_page_filters_by_kind_and_seller(conflict: Any, staff_client: Client) -> None:
    from marketplace.reconcile.models import RunTrigger
    from marketplace.reconcile.seller_pass import seller_reconcile

    seller_reconcile(seller_id=conflict.id, trigger=RunTrigger.COMMAND)
    assert "MP-STAFF" in page_text(
        staff_client.get(f"/dashboard/reconcile/?kind={kinds.ORDER_STATE_CONFLICT}")
    )
    assert "No finding matches." in page_text(
        staff_client.get(f"/dashboard/reconcile/?kind={kinds.ORDER_MISSING}")
    )
    assert "No finding matches." in page_text(
        staff_client.get(f"/dashboard/reconcile/?seller={conflict.id + 1000}")
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/dashboard/reconcile/"), ("post", "/dashboard/sellers/{id}/reconcile/")],
)
def test_sellers_and_anonymous_cannot_reach_reconciliation(
    seller: Any, seller_client: Client, client: Client, method: str, path: str
) -> None:
    url = path.format(id=seller.id)
    body = page_text(getattr(seller_client, method)(url, {"confirmed": "yes"}), status=403)
    assert "This page is for marketplace staff" in body
    response = getattr(client, method)(url, {"confirmed": "yes"})
    assert response.status_code == 302
    assert response["Location"].startswith("/sellers/login/?next=")
    assert ReconcileRun.objects.count() == 0


def test_a_seller_cannot_settle_a_finding(seller: Any, seller_client: Client) -> None:
    run = ReconcileRun.objects.create(seller=seller, trigger="command")
    finding = Finding.objects.create(
        run=run,
        seller=seller,
        kind=kinds.REFUND_NOT_IN_LEDGER,
        object_type="refund",
        object_key="MP-1/refund 7",
        action="staff",
        status="open",
    )
    url = f"/dashboard/reconcile/findings/{finding.id}/settle/"
    page_text(seller_client.post(url, {"confirmed": "yes", "note": "mine"}), status=403)
    finding.refresh_from_db()
    assert finding.status == "open"
