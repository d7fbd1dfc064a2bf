"""The catalog over real HTTP against the sandbox process: sign-in with the e-mailed code,
the export the app creates (read back exactly), runs delivering files the app ingests,
changes at the platform reaching listings, bad rows and bad files, 401 and 429."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from marketplace.catalog.api_access import api_user, sign_in
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError
from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default, mapping_parse
from marketplace.catalog.models import CatalogSource, FeedRun, Listing, PlatformApiAccess
from marketplace.platform.auth_api import LoginRefused
from marketplace.platform.models import PlatformCall
from sellers.models import Seller
from tests.marketplace.catalog.platform import (
    API_USER,
    READINGS,
    CatalogWorld,
    api_sign_in,
    product,
    wait_for,
)
from tests.support.sandbox_process import SandboxProcess

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_violations")]


@pytest.fixture(params=READINGS)
def reading(request: pytest.FixtureRequest) -> str:
    """Every test here runs under both readings of the silent points."""
    return str(request.param)


@pytest.fixture
def linked(world: CatalogWorld, seller: Seller, staff_user: Any) -> CatalogSource:
    api_sign_in(world, staff_user)
    return database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )


def feed_set_up(source: CatalogSource, compression: str = "gzip") -> CatalogSource:
    return provision.feed_provision(
        source=source,
        feed=provision.FeedSettings(mapping=mapping_default(), compression=compression),
    )


def latest_run(seller: Seller, after: int = 0) -> FeedRun | None:
    run = FeedRun.objects.filter(seller=seller, pk__gt=after).order_by("-pk").first()
    return run if run and run.status in ("succeeded", "failed") else None


def test_sign_in_stores_the_token_encrypted_and_never_logs_secrets(
    world: CatalogWorld, staff_user: Any
) -> None:
    username, password, email = API_USER
    with pytest.raises(LoginRefused):
        sign_in.access_sign_in_start(username=username, password="wrong-password")

    sign_in.access_sign_in_start(username=username, password=password)
    code = world.sandbox.twofa_code(email)
    wrong = "000000" if code != "000000" else "111111"
    with pytest.raises(LoginRefused):
        sign_in.access_sign_in_finish(
            username=username, password=password, code=wrong, actor=staff_user
        )
    sign_in.access_sign_in_start(username=username, password=password)
    code = world.sandbox.twofa_code(email)
    signed_in = sign_in.access_sign_in_finish(
        username=username, password=password, code=code, actor=staff_user
    )

    assert signed_in.state == "active"
    assert signed_in.token_name == "marketplace-test" or signed_in.token_name.startswith(
        "marketplace-"
    )
    token = signed_in.token
    assert token not in signed_in.token_ciphertext
    accounts = database_link.platform_accounts_list()
    assert [a.id for a in accounts] == [world.account_id]
    logged = " ".join(
        f"{c.path} {c.request_excerpt} {c.response_excerpt}" for c in PlatformCall.objects.all()
    )
    assert PlatformCall.objects.filter(path="/login").count() == 5
    for secret in (token, password, code):
        assert secret not in logged


def test_the_export_holds_exactly_what_the_app_asked_for(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    source = feed_set_up(linked)

    export = world.sandbox.export_state(source.export_id)["export"]
    assert export["protocol"] == "http"
    assert export["host"].endswith(f"/catalog/feeds/{source.feed_key}/")
    assert export["username"] == source.feed_username
    assert export["compression"] == "gzip"
    assert export["delimiter"] == "comma"
    assert export["export_format"] == "delimited"
    fields = sorted(export["export_fields"].values(), key=lambda f: int(f["sort_order"]))
    assert [(f["export_field_name"], f["field_name"]) for f in fields] == list(
        mapping_default().pairs
    )
    assert source.cron == "0 2 * * *"
    # Our side keeps only a hash of the feed password, never the password itself.
    assert len(source.feed_password_hash) == 64
    assert export["password"] not in source.feed_password_hash
    # ... and the call log, which saw the export go out and come back, holds none of it
    logged = " ".join(
        f"{c.request_excerpt} {c.response_excerpt}" for c in PlatformCall.objects.all()
    )
    assert '"host"' in logged
    assert export["password"] not in logged


def test_a_run_delivers_a_file_the_app_ingests_and_changes_reach_listings(
    linked: CatalogSource, world: CatalogWorld, seller: Seller, eager_tasks: None, reading: str
) -> None:
    source = feed_set_up(linked)

    provision.feed_run_request(source=source)
    run = wait_for(lambda: latest_run(seller))

    assert run.status == "succeeded", run.error
    # Delivered to the folder given as host (reading B) or to a file below it (reading A)
    export = world.sandbox.export_state(source.export_id)
    folder = export["export"]["host"]
    expected = folder if reading == "B" else folder + export["export"]["file_name"]
    assert export["runs"][0]["delivered_to"] == expected
    assert (run.rows, run.created, run.rejected) == (5, 5, 0)
    assert Listing.objects.get(seller=seller, sku="AL-0002").price == Decimal("12.50")

    # When the seller changes a price and a stock at the platform and the feed runs again
    world.sandbox.db_rows_change(
        world.db_id,
        rows=[{"id": "AL-0002", "price": "7.25"}, {"id": "AL-0003", "quantity": "0"}],
        delete=["AL-0005"],
    )
    world.sandbox.export_run(source.export_id)
    second = wait_for(lambda: latest_run(seller, after=run.pk))

    assert (second.updated, second.unchanged, second.deactivated) == (2, 2, 1)
    listings = {x.sku: x for x in Listing.objects.filter(seller=seller)}
    assert listings["AL-0002"].price == Decimal("7.25")
    assert listings["AL-0003"].quantity == 0
    assert not listings["AL-0005"].active


def test_bad_rows_are_rejected_with_their_reason_while_the_others_apply(
    linked: CatalogSource, world: CatalogWorld, seller: Seller, eager_tasks: None
) -> None:
    world.sandbox.db_rows_change(
        world.db_id,
        add=[product(6, id=""), product(7, price="-3.00")],
    )
    source = feed_set_up(linked)

    world.sandbox.export_run(source.export_id)
    run = wait_for(lambda: latest_run(seller))

    assert run.status == "succeeded"
    assert (run.created, run.rejected) == (5, 2)
    reasons = sorted(item["reason"] for item in run.rejections)
    assert reasons == ["price -3.00 is negative", "sku is missing"]
    assert Listing.objects.filter(seller=seller).count() == 5


def test_a_garbage_file_is_refused_at_the_door_and_changes_nothing(
    linked: CatalogSource, world: CatalogWorld, seller: Seller, eager_tasks: None
) -> None:
    source = feed_set_up(linked)
    world.sandbox.export_run(source.export_id)
    first = wait_for(lambda: latest_run(seller))
    before = list(Listing.objects.filter(seller=seller).values_list("sku", "price", "active"))
    # The feed is configured gzip; the platform now writes plain text (as a broken export
    # would): the file is not what the feed promised. (One attempt: the platform would
    # otherwise retry a refused delivery 30 s later.)
    world.sandbox.db_rows_change(world.db_id, rows=[{"id": "AL-0001", "price": "1.00"}])
    with api_user.platform_api() as api:
        api.exports.update(
            db_id=source.db_id,
            export_id=source.export_id,
            changes={"compression": "", "max_attempts": "1"},
        )

    run = world.sandbox.export_run(source.export_id)

    # The door refused it (415) before storing anything: the platform's run says why,
    # and no run was recorded here
    assert run["error_flag"]
    logs = " ".join(str(entry) for entry in run["logs"])
    assert "HTTP 415" in logs
    assert "not gzip" in logs
    assert not FeedRun.objects.filter(seller=seller, pk__gt=first.pk).exists()
    after = list(Listing.objects.filter(seller=seller).values_list("sku", "price", "active"))
    assert after == before


def test_a_revoked_token_turns_the_access_to_needs_sign_in_and_catalog_work_waits(
    linked: CatalogSource, world: CatalogWorld, mailoutbox: list, staff_user: Any
) -> None:
    staff_user.email = "ops@marketplace.test"
    staff_user.save()
    source = feed_set_up(linked)
    world.sandbox.api_token_revoke(username=API_USER[0])

    with pytest.raises(ApiAccessNeeded):
        provision.feed_run_request(source=source)

    access_row = PlatformApiAccess.objects.get()
    assert access_row.state == "needs_sign_in"
    assert [m.to for m in mailoutbox] == [["ops@marketplace.test"]]
    source.refresh_from_db()
    assert "sign in again" in source.last_error
    # Catalog work now waits: the sweep makes no call at all
    calls = PlatformCall.objects.count()
    assert provision.feed_status_sweep() == 0
    with pytest.raises(CatalogError):
        database_link.platform_accounts_list()
    assert PlatformCall.objects.count() == calls
    # And signing in again brings it back
    api_sign_in(world, staff_user)
    assert provision.feed_status_sweep() == 1


def test_a_429_with_retry_after_is_honoured(linked: CatalogSource, world: CatalogWorld) -> None:
    # Two export calls per 2 s: provisioning (add, get, schedule) meets a 429 on its third.
    world.sandbox.set_rate_limit("exports", limit=2, window_seconds=2)

    source = feed_set_up(linked)

    assert source.has_feed
    statuses = list(
        PlatformCall.objects.filter(path__startswith=f"/dbs/{source.db_id}/exports")
        .order_by("id")
        .values_list("status", "created_at")
    )
    assert [s for s, _ in statuses].count(429) == 1
    assert world.sandbox.violations()["total"] == 0  # no call came before the wait was over


def test_a_4xx_from_the_platform_is_shown_with_its_message(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    mapping = mapping_parse(mapping_default().as_text().replace("brand = brand", "brand = maker"))

    with pytest.raises(CatalogError) as refused:
        provision.feed_provision(source=linked, feed=provision.FeedSettings(mapping=mapping))

    assert "the platform said" in str(refused.value)
    assert "unknown field 'maker'" in str(refused.value)
    linked.refresh_from_db()
    assert not linked.has_feed
    assert "unknown field 'maker'" in linked.last_error


def test_a_failure_after_the_export_was_created_leaves_nothing_half_provisioned(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    world.sandbox.set_faults(endpoint="export_schedule", kind="500", count=1)

    with pytest.raises(CatalogError):
        feed_set_up(linked)

    linked.refresh_from_db()
    assert not linked.has_feed
    assert linked.last_error
    with api_user.platform_api() as api:
        assert api.exports.list(db_id=linked.db_id) == []  # deleted again


def test_an_export_created_but_whose_answer_was_lost_is_found_and_deleted(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    # The platform creates the export, then the answer is lost (a 500 after the write).
    world.sandbox.set_faults(endpoint="add_export", kind="500", count=1, after_view=True)

    with pytest.raises(CatalogError):
        feed_set_up(linked)

    linked.refresh_from_db()
    assert not linked.has_feed
    with api_user.platform_api() as api:
        assert api.exports.list(db_id=linked.db_id) == []  # the orphan was found and deleted


def test_removing_the_feed_deletes_the_export_at_the_platform(
    linked: CatalogSource, world: CatalogWorld
) -> None:
    source = feed_set_up(linked)
    changed = provision.feed_schedule_set(
        source=source, day="1", hour="6", minute="30", paused=True
    )
    assert (changed.cron, changed.paused) == ("30 6 * * 1", True)

    provision.feed_remove(source=changed)

    with api_user.platform_api() as api:
        assert api.exports.list(db_id=source.db_id) == []
    source.refresh_from_db()
    assert not source.has_feed
    assert source.feed_key is None


def test_a_truncated_file_delivered_over_http_changes_nothing_and_is_shown_failed(
    linked: CatalogSource, world: CatalogWorld, seller: Seller, eager_tasks: None
) -> None:
    import requests

    source = feed_set_up(linked)
    world.sandbox.export_run(source.export_id)
    first = wait_for(lambda: latest_run(seller))
    good_file = world.sandbox.export_run_file(
        world.sandbox.export_state(source.export_id)["runs"][0]["id"]
    )
    export = world.sandbox.export_state(source.export_id)["export"]
    before = list(Listing.objects.filter(seller=seller).values_list("sku", "price", "active"))

    # The same delivery as the platform's, cut short
    answer = requests.put(
        export["host"] + export["file_name"],
        data=good_file[: len(good_file) // 2],
        auth=(export["username"], export["password"]),
        headers={"Content-Type": "application/gzip"},
        timeout=30,
    )

    assert answer.status_code == 201
    failed = wait_for(lambda: latest_run(seller, after=first.pk))
    assert failed.status == "failed"
    assert "truncated" in failed.error
    after = list(Listing.objects.filter(seller=seller).values_list("sku", "price", "active"))
    assert after == before


def test_the_demo_data_of_make_run_lines_up_and_ingests_without_rejections(
    sandbox: SandboxProcess,
    settings: Any,
    live_server: Any,
    seller: Seller,
    staff_user: Any,
    eager_tasks: None,
    reading: str,
) -> None:
    # Given the sandbox's demo data (as `make run` seeds it) and the demo API user
    settings.APP_BASE_URL = live_server.url
    settings.PLATFORM_API_BASE_URL = sandbox.platform_url
    sandbox.reset()
    sandbox.readings_all(reading)
    seeded = sandbox.seed_demo(rows=300)
    sign_in.access_sign_in_start(username="marketplace-api", password="marketplace-api-pass")
    sign_in.access_sign_in_finish(
        username="marketplace-api",
        password="marketplace-api-pass",
        code=sandbox.twofa_code(seeded["email"]),
        actor=staff_user,
    )
    accounts = {a.name: a for a in database_link.platform_accounts_list()}
    assert {"Demo Seller", "Second Demo Seller"} <= set(accounts)
    account = accounts["Demo Seller"]
    (database,) = database_link.platform_databases_list(account_id=account.id)

    # When staff link it and run the default feed
    source = database_link.seller_database_link(
        seller=seller, account_id=account.id, db_id=database.id, actor=staff_user
    )
    source = feed_set_up(source)
    sandbox.export_run(source.export_id)
    run = wait_for(lambda: latest_run(seller))

    # Then every demo product becomes a listing
    assert run.status == "succeeded", run.error
    assert (run.rows, run.created, run.rejected) == (300, 300, 0), run.rejections[:3]
