"""Issue 30, "Must show": a full flow with a known buyer, then ``erase_buyer``; a
``pg_dump`` of the database and every log file the test produced name neither the
buyer's e-mail nor their name, and the ledger's sums are unchanged.

Over real HTTP: the sandbox (its own process) plays the platform, the marketplace's
Celery worker pushes the order and the return, the seller ships, authorizes, refunds the
return and posts a refund of its own through the sandbox's control API; the marketplace
pulls, decides, writes the ledger and completes both. The app's log goes to a file
through the handler set-up of ``settings.LOGGING`` (its redaction filter included).
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Sum
from django.test import Client

from marketplace.log_redaction import RedactSecretsFilter
from marketplace.orders.models import Order, OrderSync
from marketplace.platform.models import PlatformCall
from marketplace.returns.models import RefundLedgerEntry, Return, SellerRefund
from marketplace.sync.fan_out import sellers_after_sale_pull_fan_out, sellers_pull_fan_out
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import Platform

# pg_dump of the test database: Postgres only.
pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NAME = "Ottilie Brackenridge"
EMAIL = "ottilie.brackenridge@example.org"
NUMBER = "MP-GDPR-1"


@pytest.fixture
def app_log(tmp_path: Path) -> Iterator[Path]:
    """The app's log (every logger, worker thread included) in a file, as the console
    handler of ``settings.LOGGING`` writes it."""
    path = tmp_path / "app.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.addFilter(RedactSecretsFilter())
    root = logging.getLogger()
    # INFO whatever an earlier test or a worker's start left: the erasure's line is INFO.
    level = root.level
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


def _shipped() -> bool:
    sellers_pull_fan_out()
    order = Order.objects.filter(mp_order_number=NUMBER).select_related("sync").first()
    return bool(order and order.state == "SHIPPED" and order.sync.status == OrderSync.Status.SYNCED)


def _platform_has_return(platform: Platform) -> bool:
    rows = platform.sandbox.control("GET", "/returns")["returns"]
    return any(r["mp_order_number"] == NUMBER for r in rows)


def _buyer_in(text: str) -> list[str]:
    lowered = text.lower()
    return [value for value in (EMAIL, NAME, "Brackenridge") if value.lower() in lowered]


def _ledger() -> tuple[Decimal | None, int]:
    totals = RefundLedgerEntry.objects.aggregate(total=Sum("amount"))
    return totals["total"], RefundLedgerEntry.objects.count()


def test_a_buyer_erased_after_a_full_flow_is_in_no_dump_and_no_log(
    platform: Platform,
    connected_seller: Any,
    api: Client,
    worker: Any,
    app_log: Path,
) -> None:
    sandbox = platform.sandbox
    body = order_body(NUMBER)
    body["customer"] = {**body["customer"], "full_name": NAME, "email": EMAIL}
    body["shipping_address"] = {**body["shipping_address"], "full_name": NAME}
    body["delivery_notes"] = f"Hand to {NAME} only"
    created = api.post("/api/intake/orders", data=json.dumps(body), content_type="application/json")
    assert created.status_code == 201, created.content
    wait_for(
        lambda: OrderSync.objects.filter(order__mp_order_number=NUMBER, pushed_version=1).exists(),
        what="order pushed",
    )
    sandbox.ship(NUMBER)
    wait_for(_shipped, timeout=30, what="order shipped and synced")

    ret = {
        "mp_return_number": "RET-1",
        "reason": f"{NAME} found it chipped",
        "return_lines": [{"mp_line_number": "1", "quantity": 1}],
    }
    url = f"/api/intake/orders/{NUMBER}/returns"
    returned = api.post(url, data=json.dumps(ret), content_type="application/json")
    assert returned.status_code == 201, returned.content
    wait_for(lambda: _platform_has_return(platform), what="the return at the platform")
    sandbox.control("POST", f"/orders/{NUMBER}/returns/RET-1/authorize", {"rma": "RMA-9"})
    sandbox.control(
        "POST",
        f"/orders/{NUMBER}/returns/RET-1/refund",
        {
            "lines": [
                {
                    "mp_return_line_number": "1",
                    "principal_refund_amount": 12.5,
                    "shipping_refund_amount": 0,
                }
            ]
        },
    )
    refund = sandbox.control(
        "POST",
        f"/orders/{NUMBER}/refunds",
        {
            "refund_lines": [
                {
                    "mp_line_number": "2",
                    "refund_reason": "PRICE_ERROR",
                    "refund_quantity": 1,
                    "currency": "EUR",
                    "item_refund": "2.00",
                    "refund_notes": f"goodwill for {NAME}",
                }
            ]
        },
    )

    def answered() -> bool:
        sellers_after_sale_pull_fan_out()
        ret_row = Return.objects.filter(mp_return_number="RET-1").first()
        refund_row = SellerRefund.objects.filter(refund_id=str(refund["feedamp_refund_id"]))
        return bool(
            ret_row
            and ret_row.status == "COMPLETED"
            and refund_row.filter(status="COMPLETE").exists()
        )

    wait_for(answered, timeout=90, what="return and refund completed")
    ledger = _ledger()
    assert ledger[1] == 2, ledger  # the return's line and the seller's refund line
    # The call log never held the buyer, even before the erasure (scrubbed on the way in).
    calls = PlatformCall.objects.filter(order_number=NUMBER)
    assert calls.filter(path__contains="/returns/RET-1").exists()
    stored = " ".join(f"{c.path} {c.request_excerpt} {c.response_excerpt}" for c in calls)
    assert _buyer_in(stored) == []
    assert Order.objects.get(mp_order_number=NUMBER).customer_email == EMAIL

    out = io.StringIO()
    call_command("erase_buyer", email=EMAIL, by="privacy officer", stdout=out)
    printed = out.getvalue()
    assert "Matching: 1 order(s) (1 closed, 0 open), 1 return(s)." in printed
    assert "1 order(s) and 1 return(s) erased" in printed

    # The money is as it was.
    assert _ledger() == ledger
    # A dump of the whole database names the order, but not the buyer.
    dump = subprocess.run(
        [
            "pg_dump",
            "--host",
            str(connection.settings_dict["HOST"] or "127.0.0.1"),
            "--port",
            str(connection.settings_dict["PORT"] or 5432),
            "--username",
            str(connection.settings_dict["USER"] or "postgres"),
            str(connection.settings_dict["NAME"]),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PGPASSWORD": str(connection.settings_dict["PASSWORD"] or ""), "PATH": "/usr/bin"},
        check=False,
    )
    assert dump.returncode == 0, dump.stderr
    assert NUMBER in dump.stdout
    assert "RMA-9" in dump.stdout
    assert _buyer_in(dump.stdout) == []
    # Every log file of the test: the app's (web, worker) and the sandbox process's.
    logs = {app_log: app_log.read_text(encoding="utf-8"), sandbox.log_path: ""}
    logs[sandbox.log_path] = Path(sandbox.log_path).read_text(encoding="utf-8", errors="replace")
    assert "buyer erasure" in logs[app_log]
    for path, text in logs.items():
        assert _buyer_in(text) == [], f"{path} names the buyer"
