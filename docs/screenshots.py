"""Screenshots of the dashboard and the seller portal for the README: ``make screenshots``.

``python -m docs.screenshots [--out docs/screenshots] [--keep]``

1. A throwaway SQLite database (``DATABASE_URL=sqlite:///<tmp>/demo.sqlite3``), migrated.
2. A demo seeded through the ORM: sellers in every connection state, orders in every sync
   status with shipments and validation problems, connection timelines, sync histories,
   staff actions and 24 hours of platform call log.
3. The app under ``runserver --noreload`` on a free port (a subprocess).
4. Debian's Chromium through Playwright signs in as staff and as a seller and saves
   ``overview.png``, ``seller.png``, ``sellers.png``, ``orders.png``, ``order.png``,
   ``api-docs.png``, ``portal.png``, ``portal-home.png`` and ``portal-phone.png``, and
   the catalog: ``catalog.png`` (staff, one seller's feed and runs), ``catalog-run.png``
   (a run with rejected rows) and ``portal-listings.png``.
5. A sandbox process (its own temporary database, demo data from ``seed-demo``, one
   order placed and shipped) for ``sandbox.png``, ``sandbox-v2.png`` and
   ``sandbox-platform.png``.

The app's pages talk to no platform: they only read the database. The demo "tokens" are
made-up strings encrypted with the development key, in a database deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import urlopen

REPO_DIR = Path(__file__).resolve().parent.parent
CHROMIUM_PATH = os.environ.get("CHROMIUM_PATH", "/usr/lib/chromium/chromium")
STAFF = ("admin", "admin-demo-pass")
PORTAL_SELLER = ("seller", "seller-demo-pass")
VIEWPORT = {"width": 1280, "height": 900}

# (username, display name, connection state or None for "never connected")
SELLERS = [
    ("seller", "Nordic Ceramics", "connected"),
    ("bluebird", "Bluebird Books", "connected"),
    ("peak", "Peak Outdoor Supply", "needs_reauth"),
    ("urbantees", "Urban Tees", "disconnected"),
    ("greenleaf", "Green Leaf Tea Co.", None),
    ("maple", "Maple & Oak Furniture", "connected"),
    ("lumen", "Lumen Lighting", "connected"),
]
PRODUCTS = [
    ("MUG-STONE", "Stoneware mug, grey", "18.00"),
    ("BOWL-SET", "Serving bowl set", "42.50"),
    ("VASE-TALL", "Tall vase, celadon", "65.00"),
    ("PLATE-4", "Dinner plates (4)", "54.00"),
    ("TEAPOT", "Teapot, 1 l", "38.90"),
]
CUSTOMERS = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov", "Radia Perlman"]
CITIES = [("London", "GBR"), ("Berlin", "DEU"), ("Austin", "USA"), ("Toronto", "CAN")]
TRACKING = {
    "UPS": ("1Z{:016d}", "https://www.ups.com/track?tracknum={}"),
    "USPS": ("9400{:018d}", "https://tools.usps.com/go/TrackConfirmAction?tLabels={}"),
    "FedEx": ("{:012d}", "https://www.fedex.com/fedextrack/?trknbr={}"),
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def configure(workdir: Path) -> dict[str, str]:
    """Environment for this process and the server: the throwaway DB and broker folder."""
    env = {
        "DJANGO_ENV": "development",
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{workdir / 'demo.sqlite3'}",
        "CELERY_DATA_DIR": str(workdir / "celery"),
        "REDIS_URL": "",
        "DJANGO_SETTINGS_MODULE": "marketplace.settings",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    return {**os.environ, **env}


def seed() -> None:
    """The demo, through the ORM (call after ``django.setup()`` and migrate)."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from marketplace.dashboard.models import StaffAction
    from marketplace.orders.models import (
        LineCancellation,
        Order,
        OrderLine,
        OrderSync,
        Shipment,
        SyncEvent,
        ValidationProblem,
    )
    from marketplace.platform.models import PlatformCall
    from marketplace.sync.models import SellerSync
    from sellers.models import ConnectionEvent, PlatformConnection, Seller

    rng = random.Random(7)
    now = timezone.now()
    users = get_user_model()
    admin = users.objects.create_user(
        username=STAFF[0], password=STAFF[1], is_staff=True, is_superuser=True
    )
    sellers: list[Seller] = []
    for index, (username, name, state) in enumerate(SELLERS):
        password = PORTAL_SELLER[1] if username == PORTAL_SELLER[0] else f"{username}-demo-pass"
        user = users.objects.create_user(username=username, password=password)
        seller = Seller.objects.create(user=user, display_name=name, platform_username=username)
        sellers.append(seller)
        events = [(ConnectionEvent.Kind.CONNECT_STARTED, "redirected to the platform", None)]
        if state is not None:
            connection = PlatformConnection(
                seller=seller,
                state=state,
                connected_at=now - timedelta(days=40 + index),
                last_refreshed_at=now - timedelta(minutes=12 + index * 3),
                access_token_expires_at=now + timedelta(minutes=48 - index * 9),
                refresh_token_expires_at=now + timedelta(days=325 - index * 70),
                generation=12 + index,
            )
            events.append((ConnectionEvent.Kind.CONNECTED, "grant stored", None))
            events.append(
                (ConnectionEvent.Kind.REFRESHED, "access token refreshed; new refresh token", None)
            )
            if state == "connected":
                connection.tokens_set(
                    access_token=f"demo-access-{username}", refresh_token=f"demo-refresh-{username}"
                )
            elif state == "needs_reauth":
                connection.last_error = "the platform refused the refresh (invalid_grant)"
                events.append(
                    (ConnectionEvent.Kind.REFRESH_FAILED, "will retry: PlatformUnavailable", None)
                )
                events.append((ConnectionEvent.Kind.NEEDS_REAUTH, connection.last_error, None))
            elif state == "disconnected":
                events.append((ConnectionEvent.Kind.DISCONNECTED, "disconnected by seller", None))
            connection.save()
        created = ConnectionEvent.objects.bulk_create(
            [ConnectionEvent(seller=seller, kind=k, detail=d, actor=a) for k, d, a in events]
        )
        for age, event in enumerate(reversed(created)):
            ConnectionEvent.objects.filter(pk=event.pk).update(
                created_at=now - timedelta(hours=age * 7 + 1)
            )
        if state == "connected":
            SellerSync.objects.create(
                seller=seller,
                cursor=now - timedelta(minutes=3),
                last_started_at=now - timedelta(minutes=1 + index),
                last_finished_at=now - timedelta(minutes=1 + index),
                last_success_at=now - timedelta(minutes=1 + index * 2),
                last_error="PlatformUnavailable: platform timeout on GET /orders"
                if username == "lumen"
                else "",
            )

    statuses = ["synced"] * 7 + ["pending", "retrying", "failed", "waiting_for_connection"]
    number = 1040
    for seller, (_, _, state) in zip(sellers, SELLERS, strict=True):
        for n in range(rng.randint(6, 12) if seller.user.username != "greenleaf" else 0):
            number += 1
            status = statuses[rng.randrange(len(statuses))]
            if state != "connected" and status != "synced":
                status = "waiting_for_connection"
            elif state == "connected" and status == "waiting_for_connection":
                status = "pending"
            customer = rng.choice(CUSTOMERS)
            city, country = rng.choice(CITIES)
            placed = now - timedelta(hours=n * 5 + rng.randint(1, 4))
            order = Order.objects.create(
                mp_order_number=f"MP-{number}",
                seller=seller,
                state=rng.choice(["AWAITING_SHIPMENT"] * 4 + ["PENDING"]),
                sales_channel="EU" if country != "USA" else "US",
                purchase_date=placed,
                currency="EUR",
                customer_full_name=customer,
                customer_email="buyer@example.com",
                ship_full_name=customer,
                ship_address1="12 Analytical Row",
                ship_city=city,
                ship_country_code=country,
                latest_ship_date=placed + timedelta(days=3),
                intake_fingerprint=f"{number:064d}",
                fulfillment_status="",
            )
            lines = [
                OrderLine.objects.create(
                    order=order,
                    mp_line_number=str(i),
                    sku=sku,
                    product_name=product,
                    quantity=rng.randint(1, 3),
                    unit_price=Decimal(price),
                )
                for i, (sku, product, price) in enumerate(rng.sample(PRODUCTS, 2), 1)
            ]
            payload = {
                "mp_order_number": order.mp_order_number,
                "marketplace_state": order.state,
                "sales_channel": order.sales_channel,
                "currency": "EUR",
                "purchase_date": placed.isoformat(),
                "order_lines": [
                    {
                        "mp_line_number": line.mp_line_number,
                        "sku": line.sku,
                        "quantity": line.quantity,
                        "unit_price": float(line.unit_price),
                    }
                    for line in lines
                ],
            }
            errors = {
                "failed": ("platform rejected the order (400): order_lines[0].quantity", 400),
                "retrying": ("platform unavailable (503); next attempt in 40 s", 503),
                "waiting_for_connection": ("the seller's platform connection is not live", None),
            }
            error, error_status = errors.get(status, ("", None))
            OrderSync.objects.create(
                order=order,
                status=status,
                desired_version=2 if status != "synced" else 1,
                pushed_version=1,
                attempts=3 if status in ("failed", "retrying") else 1,
                failures=3 if status in ("failed", "retrying") else 0,
                next_attempt_at=now - timedelta(minutes=rng.randint(1, 9))
                if status in ("pending", "retrying")
                else None,
                last_error=error,
                last_error_status=error_status,
                last_payload=payload,
                last_response='{"status": "ORDERED", "acknowledged": true}',
                last_pushed_at=placed + timedelta(seconds=2),
            )
            history = [
                (SyncEvent.Kind.QUEUED, f"order received as {order.state}", "intake"),
                (SyncEvent.Kind.PUSHED, f"platform has the order as {order.state}", ""),
            ]
            if status == "failed":
                history.append((SyncEvent.Kind.PUSH_FAILED, error, ""))
            if status == "retrying":
                history.append((SyncEvent.Kind.RETRY_SCHEDULED, error, ""))
            shipped = state == "connected" and rng.random() < 0.6
            if shipped:
                carrier = rng.choice(list(TRACKING))
                pattern, url = TRACKING[carrier]
                tracking = pattern.format(rng.randrange(10**11))
                Shipment.objects.create(
                    line=lines[0],
                    quantity=lines[0].quantity,
                    carrier=carrier,
                    tracking_number=tracking,
                    tracking_url=url.format(tracking),
                    shipped_date=(now - timedelta(hours=n * 4)).date(),
                )
                if rng.random() < 0.3:
                    LineCancellation.objects.create(
                        line=lines[1], quantity=1, reason="out_of_stock"
                    )
                order.fulfillment_status = "PARTIALLY_FULFILLED"
                order.fulfillment_pulled_at = now - timedelta(minutes=n + 2)
                order.save()
                history.append((SyncEvent.Kind.PULLED, "fulfillment changed", ""))
                history.append((SyncEvent.Kind.FULFILLMENT_STORED, "1 shipment stored", ""))
            if shipped and n % 4 == 1:
                ValidationProblem.objects.create(
                    order=order,
                    code="INVALID_TRACKING_NUMBER",
                    mp_line_number="2",
                    message="UPS tracking number '1Z12' is not valid: expected 1Z followed by "
                    "16 letters or digits",
                    fingerprint=f"demo-{order.id}-tracking",
                    last_seen_at=now,
                    reported_at=now - timedelta(minutes=n + 1),
                )
                history.append((SyncEvent.Kind.PROBLEM_REPORTED, "INVALID_TRACKING_NUMBER 2", ""))
            if shipped and n % 5 == 2:
                ValidationProblem.objects.create(
                    order=order,
                    code="UNKNOWN_CARRIER",
                    mp_line_number="1",
                    message="carrier 'Acme Parcel Express' is not a carrier we know",
                    fingerprint=f"demo-{order.id}-carrier",
                    last_seen_at=now,
                    reported_at=now - timedelta(minutes=n + 1),
                )
            created = SyncEvent.objects.bulk_create(
                [
                    SyncEvent(order=order, kind=k, message=m, actor=a, version=1)
                    for k, m, a in history
                ]
            )
            for age, event in enumerate(reversed(created)):
                SyncEvent.objects.filter(pk=event.pk).update(
                    created_at=placed + timedelta(minutes=5 * (len(created) - age))
                )

    # 24 hours of call log: pushes follow the day's order curve, pulls are steady,
    # and a platform outage around eight hours ago shows up as failures.
    calls = []
    connected = [s for s, (_, _, st) in zip(sellers, SELLERS, strict=True) if st == "connected"]
    for hour in range(24):
        pushes = int(14 + 10 * math.sin((24 - hour) / 24 * 2 * math.pi) + rng.randint(0, 4))
        pulls = 20 + rng.randint(0, 6)
        outage = hour in (7, 8)
        for i in range(pushes + pulls):
            seller = connected[i % len(connected)]
            is_push = i < pushes
            failed = (outage and i % 3 == 0) or rng.random() < 0.02
            calls.append(
                PlatformCall(
                    seller=seller,
                    method="PUT" if is_push else "GET",
                    path=f"/orders/MP-{1041 + i % 60}" if is_push else "/orders?page_size=50",
                    order_number=f"MP-{1041 + i % 60}" if is_push else "",
                    status=(503 if outage else 500) if failed else (200 if not is_push else 201),
                    error="",
                    duration_ms=rng.randint(40, 400),
                    response_excerpt=(
                        '{"error": "unavailable"}' if failed else '{"status": "ORDERED"}'
                    ),
                )
            )
    created_calls = PlatformCall.objects.bulk_create(calls)
    per_hour = len(created_calls) // 24
    this_hour = now.replace(minute=0, second=0, microsecond=0)
    for hour in range(24):
        chunk = created_calls[hour * per_hour : (hour + 1) * per_hour]
        # Inside its clock hour (and not in the future), so each chart bar is one hour.
        at = min(this_hour - timedelta(hours=hour, minutes=-rng.randint(0, 59)), now)
        PlatformCall.objects.filter(pk__in=[c.pk for c in chunk]).update(created_at=at)
    # Make the order pages' call logs match their orders.
    for order in Order.objects.filter(seller__in=connected)[:40]:
        PlatformCall.objects.create(
            seller=order.seller,
            method="PUT",
            path=f"/orders/{order.mp_order_number}",
            order_number=order.mp_order_number,
            status=201,
            duration_ms=120,
            response_excerpt=json.dumps(
                {"mp_order_number": order.mp_order_number, "status": "ORDERED"}
            ),
        )
    failed_order = Order.objects.filter(sync__status="failed").first()
    if failed_order is not None:
        StaffAction.objects.create(
            kind=StaffAction.Kind.ORDER_RETRY,
            actor=admin,
            actor_username=admin.get_username(),
            seller=failed_order.seller,
            order=failed_order,
            ok=False,
            result="The push failed again: platform rejected the order (400)",
        )
    StaffAction.objects.create(
        kind=StaffAction.Kind.SELLER_PULL,
        actor=admin,
        actor_username=admin.get_username(),
        seller=sellers[0],
        ok=True,
        result="Pulled.",
    )


def seed_catalog() -> None:
    """The portal seller's catalog: a linked database, a feed, runs and listings."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from marketplace.catalog.models import (
        CatalogSource,
        FeedRun,
        Listing,
        PlatformApiAccess,
        StatusImport,
    )
    from sellers.models import Seller

    now = timezone.now()
    admin = get_user_model().objects.get(username=STAFF[0])
    seller = Seller.objects.get(user__username=PORTAL_SELLER[0])
    PlatformApiAccess.objects.update_or_create(
        defaults={
            "state": PlatformApiAccess.State.ACTIVE,
            "username": "marketplace-api",
            "token_name": "marketplace-development",
            "signed_in_at": now - timedelta(days=3),
            "signed_in_by": admin,
        }
    )
    source = CatalogSource.objects.create(
        seller=seller,
        account_id="1",
        account_name="Nordic Ceramics AB",
        db_id="1",
        db_name="Nordic Ceramics products",
        linked_at=now - timedelta(days=3),
        linked_by=admin,
        feed_state=CatalogSource.FeedState.ACTIVE,
        export_id="7",
        feed_key="demo-feed-key",
        feed_username="feed-nordic",
        file_name="marketplace-feed.csv.gz",
        cron="15 */6 * * *",
        provisioned_at=now - timedelta(days=3),
        platform_status="success",
    )
    StatusImport.objects.create(
        source=source,
        state=StatusImport.State.ACTIVE,
        import_id="3",
        status_key="demo-status-key",
        username=f"status-{seller.pk}",
        join_key="id",
        cron="15 * * * *",
        provisioned_at=now - timedelta(days=3),
        platform_status="success",
        last_download_time=(now - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S"),
        last_log={
            "id": "41",
            "import_id": "3",
            "message": "Import done: 5 rows, 5 matched, 0 unmatched, 0 created, 0 bad lines "
            "(attempt 1 of 3)",
            "time": (now - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S"),
            "error_flag": "0",
        },
        status_checked_at=now - timedelta(minutes=2),
    )
    runs = [
        (FeedRun.Status.SUCCEEDED, now - timedelta(hours=6), 5, 5, 0, 0, []),
        (
            FeedRun.Status.SUCCEEDED,
            now - timedelta(minutes=20),
            6,
            1,
            1,
            1,
            [{"line": 7, "sku": "", "reason": "sku is required"}],
        ),
    ]
    for status, at, rows, created, updated, rejected, rejections in runs:
        run = FeedRun.objects.create(
            seller=seller,
            status=status,
            started_at=at,
            finished_at=at + timedelta(seconds=2),
            duration_ms=1840,
            file_path="feeds/demo.csv.gz",
            file_bytes=48_213,
            compression="gzip",
            rows=rows,
            created=created,
            updated=updated,
            rejected=rejected,
            rejections=rejections,
        )
        FeedRun.objects.filter(pk=run.pk).update(received_at=at)
    FeedRun.objects.create(
        seller=seller,
        status=FeedRun.Status.FAILED,
        started_at=now - timedelta(hours=12),
        finished_at=now - timedelta(hours=12),
        file_path="feeds/truncated.csv.gz",
        file_bytes=1_024,
        compression="gzip",
        error="the file is not a complete gzip stream (truncated?); nothing was changed",
    )
    for index, (sku, title, price) in enumerate(PRODUCTS):
        Listing.objects.create(
            seller=seller,
            sku=sku,
            title=title,
            brand="Nordic Ceramics",
            gtin=f"735000000{index:04d}",
            price=Decimal(price),
            quantity=0 if index == 3 else 12 + index * 5,
            active=index != 4,
            image_link=f"https://example.com/img/{sku.lower()}.jpg",
            link=f"https://nordic-ceramics.example/p/{sku.lower()}",
        )


def sandbox_capture(out: Path) -> list[Path]:
    """The sandbox's own pages, from a sandbox process with its demo data."""
    import requests
    from playwright.sync_api import sync_playwright

    from tests.support.sandbox_process import SandboxProcess

    shots = []
    with SandboxProcess() as sandbox:
        subprocess.run(
            [sys.executable, "-m", "sandbox", "seed-demo", "--db", str(sandbox.db_path)],
            cwd=REPO_DIR,
            check=True,
            capture_output=True,
        )
        sandbox.register_client("demo-marketplace", "demo-secret", "http://127.0.0.1/cb/")
        sandbox.create_seller("demo-seller", "demo-seller-pass", name="Demo Seller")
        token = sandbox.mint_tokens("demo-marketplace", "demo-seller")["access_token"]
        for number in ("MP-1001", "MP-1002", "MP-1003"):
            requests.put(
                f"{sandbox.api_url}/orders/{number}",
                json=_sandbox_order(number),
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            ).raise_for_status()
        sandbox.ship("MP-1001", carrier="UPS")
        sandbox.ship("MP-1002", lines=[{"mp_line_number": "1", "quantity": 1}])
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM_PATH, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            for name, path in (
                ("sandbox.png", "/sandbox/"),
                ("sandbox-v2.png", "/sandbox/v2/"),
                ("sandbox-platform.png", "/sandbox/platform/"),
            ):
                page.goto(sandbox.base_url + path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(out / name), full_page=False)
                shots.append(out / name)
            browser.close()
    return shots


def _sandbox_order(number: str) -> dict[str, Any]:
    purchased = datetime.now(UTC) - timedelta(days=1)
    return {
        "mp_order_number": number,
        "sales_channel": "EU",
        "purchase_date": purchased.isoformat(),
        "currency": "EUR",
        "marketplace_state": "AWAITING_SHIPMENT",
        "customer": {"full_name": "Ada Lovelace", "email": "ada@example.com"},
        "shipping_address": {
            "full_name": "Ada Lovelace",
            "address1": "12 Analytical Row",
            "city": "London",
            "postal_code": "N1 7AA",
            "country_code": "GBR",
        },
        "order_lines": [
            {"mp_line_number": "1", "sku": "MUG-STONE", "quantity": 2, "unit_price": 18.0},
            {"mp_line_number": "2", "sku": "TEAPOT", "quantity": 1, "unit_price": 38.9},
        ],
    }


def wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the app server exited early")
        try:
            with urlopen(url, timeout=1) as response:  # noqa: S310 - our own local server
                if response.status == 200:
                    return
        except (URLError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"the app did not answer {url} within {timeout} s")


def sign_in(page: Any, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/sellers/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-button")
    page.wait_for_load_state("networkidle")


def capture(base: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    from marketplace.catalog.models import FeedRun
    from marketplace.orders.models import Order
    from sellers.models import Seller

    demo_seller = Seller.objects.get(user__username=PORTAL_SELLER[0])
    failed = Order.objects.filter(sync__status="failed").order_by("id").first()
    run_with_rejections = FeedRun.objects.filter(rejected__gt=0).first()
    shots = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM_PATH, args=["--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        page = context.new_page()
        sign_in(page, base, *STAFF)
        pages = [
            ("overview.png", "/dashboard/"),
            ("seller.png", f"/dashboard/sellers/{demo_seller.id}/"),
            ("sellers.png", "/dashboard/sellers/"),
            ("orders.png", "/dashboard/orders/?problems=on"),
            ("api-docs.png", "/api/intake/docs"),
        ]
        if failed is not None:
            pages.append(("order.png", f"/dashboard/orders/{failed.id}/"))
        pages.append(("catalog.png", f"/dashboard/catalog/sellers/{demo_seller.id}/"))
        if run_with_rejections is not None:
            pages.append(("catalog-run.png", f"/dashboard/catalog/runs/{run_with_rejections.id}/"))
        for name, path in pages:
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out / name), full_page=True)
            shots.append(out / name)
        context.close()
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        page = context.new_page()
        sign_in(page, base, *PORTAL_SELLER)
        for name, path in (
            ("portal.png", "/sellers/orders/"),
            ("portal-home.png", "/sellers/"),
            ("portal-listings.png", "/sellers/catalog/"),
        ):
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out / name), full_page=True)
            shots.append(out / name)
        # The seller's orders on a phone (390 px wide): rows become cards.
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(base + "/sellers/orders/")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / "portal-phone.png"))
        shots.append(out / "portal-phone.png")
        browser.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO_DIR / "docs" / "screenshots"))
    parser.add_argument("--keep", action="store_true", help="keep the demo database")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="screenshots-"))
    env = configure(workdir)

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    seed()
    seed_catalog()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=REPO_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_up(base + "/healthz", server)
        shots = capture(base, out)
        shots += sandbox_capture(out)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for shot in shots:
        print(f"saved {shot.relative_to(REPO_DIR) if shot.is_relative_to(REPO_DIR) else shot}")
    if args.keep:
        print(f"demo database kept in {workdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
