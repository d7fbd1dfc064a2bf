"""Staff in a real browser: Reconcile now on a seller's page, the finding on the
Reconciliation page, settled with a note."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.services.intake import order_create
from marketplace.orders.services.push import order_push
from marketplace.reconcile import services
from marketplace.reconcile.models import Finding
from marketplace.reconcile.tasks import seller_reconcile_task
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.browser


def test_staff_reconcile_a_seller_and_settle_what_was_found(
    page: Page,
    live_server: Any,
    platform: Platform,
    seller: Seller,
    staff_user: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given support cancelled an order at the platform that we hold awaiting shipment
    platform.connect(seller)
    order, _ = order_create(data=OrderIn.model_validate(order_body("MP-BR1", seller="alice")))
    assert order_push(order_id=order.id) == "synced"
    platform.sandbox.control(
        "POST", "/orders/MP-BR1/drift", {"kind": "order_state", "marketplace_state": "CANCELLED"}
    )
    # (the queued pass runs at once, as a worker would)
    monkeypatch.setattr(
        services, "task_enqueue", lambda name, *args, **options: seller_reconcile_task(*args)
    )
    # When staff press Reconcile now on the seller's page
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/sellers/{seller.id}/")
    page.click("#reconcile-button")
    expect(page.locator(".msg-success")).to_contain_text("Reconciled: 1 finding(s).")
    expect(page.locator("#reconcile-open")).to_contain_text("1 finding waits for you.")
    # Then the finding shows both versions, and staff settle it with a note
    page.click("#findings-link")
    finding = Finding.objects.get()
    row = page.locator(f"#finding-{finding.id}")
    expect(row).to_contain_text("Order state differs (both sides moved)")
    expect(row).to_contain_text('"marketplace_state": "CANCELLED"')
    row.locator("textarea").fill("Support cancelled it; cancelled here too.")
    page.click(f"#settle-{finding.id}")
    expect(page.locator(".msg-success")).to_contain_text(f"Finding {finding.id} settled.")
    expect(page.locator(f"#settled-{finding.id}")).to_contain_text("Settled by staff")
    finding.refresh_from_db()
    assert (finding.status, finding.staff_note) == (
        "settled",
        "Support cancelled it; cancelled here too.",
    )
