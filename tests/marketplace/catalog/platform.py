"""Wiring the app to the session's sandbox for the catalog: an API user reaching one
account with a small product database, signed in through the app's own services."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marketplace.catalog.api_access import sign_in
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.models import CatalogSource, StatusImport
from tests.support.sandbox_process import SandboxProcess

# The end-to-end flows run under both readings of the silent points (the contract's last
# table): such a module overrides the ``reading`` fixture with ``params=READINGS`` and uses
# ``no_violations`` (tests/marketplace/catalog/conftest.py).
READINGS = ("A", "B")

API_USER = ("catalog-api", "catalog-api-pass-1", "catalog-api@marketplace.test")
ACCOUNT = "Alice Platform Account"


def product(n: int, **changes: str) -> dict[str, str]:
    row = {
        "id": f"AL-{n:04d}",
        "title": f"Stoneware Mug {n}",
        "description": "A sturdy mug, dishwasher safe.",
        "brand": "Northwind",
        "gtin": "4006381333931",
        "price": f"{10 + n}.50",
        "sale_price": "",
        "quantity": str(n),
        "condition": "new",
        "image_link": f"https://img.example.com/{n}.jpg",
        "link": f"https://alice.example.com/p/{n}",
        "product_type": "Home > Mugs",
    }
    row.update(changes)
    return row


@dataclass
class CatalogWorld:
    sandbox: SandboxProcess
    account_id: str
    db_id: str


def catalog_world_create(
    sandbox: SandboxProcess, settings: Any, rows: int = 5, reset: bool = True
) -> CatalogWorld:
    """A clean sandbox (``reset``) holding ``rows`` products of Alice; settings point at it."""
    if reset:
        sandbox.reset()
    settings.PLATFORM_API_BASE_URL = sandbox.platform_url
    settings.PLATFORM_EDRTS_BASE_URL = sandbox.edrts_url
    db = sandbox.db_create(
        "Alice products", account_name=ACCOUNT, rows=[product(n) for n in range(1, rows + 1)]
    )
    username, password, email = API_USER
    sandbox.api_user_create(username, password, email, account_ids=[str(db["account_id"])])
    return CatalogWorld(sandbox=sandbox, account_id=str(db["account_id"]), db_id=str(db["id"]))


def edrts_source_create(world: CatalogWorld, seller: Any) -> CatalogSource:
    """The seller linked to the world's database with the default feed mapping (SKU from the
    product id), its listing-status import run once (the mp_* fields exist there): EDRTS
    sends the seller's statuses."""
    source = CatalogSource.objects.create(
        seller=seller,
        account_id=world.account_id,
        db_id=world.db_id,
        export_fields=mapping_default().as_json(),
    )
    StatusImport.objects.create(
        source=source,
        state=StatusImport.State.ACTIVE,
        import_id="1",
        last_download_time="2026-11-27 02:15:00",
    )
    return source


def api_sign_in(world: CatalogWorld, actor: Any = None) -> None:
    username, password, email = API_USER
    sign_in.access_sign_in_start(username=username, password=password)
    sign_in.access_sign_in_finish(
        username=username, password=password, code=world.sandbox.twofa_code(email), actor=actor
    )


def wait_for(condition: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not met in time")
