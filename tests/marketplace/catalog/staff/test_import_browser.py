"""The staff page of one seller in a real browser (Playwright + Debian Chromium), against
the live app and the sandbox process: setting up the feed brings the listing-status
import; after a feed run and an import run the page shows both, their schedules and last
runs; staff change the import's schedule there. Under both readings of the silent points:
under B the platform refuses an hourly schedule and the page says what was set."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.catalog.feeds import database_link
from marketplace.catalog.models import CatalogSource, FeedRun, StatusImport, StatusSync
from sellers.models import Seller
from tests.marketplace.catalog.platform import READINGS, api_sign_in, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("no_violations")]


@pytest.fixture(params=READINGS)
def reading(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_the_sellers_staff_page_shows_the_feed_and_the_import_with_schedules_and_last_runs(
    page: Page,
    live_server: Any,
    world: Any,
    seller: Seller,
    staff_user: Any,
    eager_tasks: None,
    reading: str,
) -> None:
    base = live_server.url
    # EDRTS off: the import alone, hourly (with EDRTS on it is the daily reconciliation)
    StatusSync.objects.create(seller=seller, edrts_enabled=False)
    api_sign_in(world, staff_user)
    database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )
    page.goto(f"{base}/sellers/login/")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "staff-pass-123")
    page.click("#login-button")
    page.wait_for_load_state()

    # Setting up the feed sets up the import right after it
    page.goto(f"{base}/dashboard/catalog/sellers/{seller.pk}/")
    page.click("#feed-button")
    expect(page.locator(".msg-success")).to_contain_text("set up at the platform")
    expect(page.locator("#feed-schedule")).to_contain_text("daily at 02:00 UTC")
    expect(page.locator("#feed-schedule")).to_contain_text("0 2 * * *")
    if reading == "A":
        expect(page.locator("#import-schedule")).to_contain_text("every hour at minute 15")
        expect(page.locator("#import-schedule")).to_contain_text("15 * * * *")
        expect(page.locator("#import-schedule-note")).to_have_count(0)
    else:
        expect(page.locator("#import-schedule-words")).to_have_text("daily at 02:15 UTC")
        expect(page.locator("#import-schedule-note")).to_contain_text(
            "the platform refused an hourly schedule"
        )
        expect(page.locator("#import-schedule")).to_contain_text("15 2 * * *")
    expect(page.locator("#import-last-run")).to_contain_text("not run yet")
    expect(page.locator("#import-columns")).to_contain_text("Last updated")
    source = CatalogSource.objects.get(seller=seller)
    status_import = StatusImport.objects.get(source=source)
    expect(page.locator("#import-id")).to_have_text(status_import.import_id)

    # The feed runs and is ingested, then the platform's import runs
    world.sandbox.export_run(source.export_id)
    run = wait_for(
        lambda: FeedRun.objects.filter(seller=seller, status__in=["succeeded", "failed"]).first()
    )
    assert run.status == "succeeded", run.error
    world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})
    page.click("#feed-status-button")
    page.click("#import-status-button")

    expect(page.locator("#feed-runs .run-status").first).to_have_text("Succeeded")
    expect(page.locator("#platform-status")).to_be_visible()
    expect(page.locator("#import-last-run")).to_contain_text("5 matched")
    expect(page.locator("#import-last-run")).not_to_contain_text("failed")

    # Staff move the import to 03:45 on Mondays
    page.select_option("#import-schedule-form select[name=day]", "1")
    page.select_option("#import-schedule-form select[name=hour]", "3")
    page.fill("#import-schedule-form input[name=minute]", "45")
    page.click("#import-schedule-button")
    expect(page.locator(".msg-success")).to_contain_text("import's schedule changed")
    expect(page.locator("#import-schedule")).to_contain_text("Mondays at 03:45 UTC")
    expect(page.locator("#import-schedule")).to_contain_text("45 3 * * 1")
    expect(page.locator("#import-schedule-note")).to_have_count(0)  # set as asked
    held = world.sandbox.control("GET", f"/imports/{status_import.import_id}")["import"]
    assert held.get("cron", "45 3 * * 1") == "45 3 * * 1"  # reading B: no cron in the record
    status_import.refresh_from_db()
    assert (status_import.cron, status_import.schedule_note) == ("45 3 * * 1", "")
