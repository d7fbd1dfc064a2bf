"""The listing-status import over real HTTP against the sandbox process: provisioning
(create → delimiters → file map with hex keys → schedule → read back), the platform's
refusals shown on the seller's staff page with nothing left behind, target changes,
credential rotation, status refresh, removal and the cleanup sweep."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from django.test import Client

from marketplace.catalog import credential_rotation, sweeps
from marketplace.catalog.api_access import api_user
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.listing_status.status_file import DEFAULT_TARGETS, HEADER
from marketplace.catalog.models import CatalogSource, StatusImport, StatusSync
from marketplace.platform.errors import PlatformRejected
from marketplace.platform.imports import ImportsApi, file_map_body, hex_key, maps_pairs
from marketplace.platform.models import PlatformCall
from sellers.models import Seller
from tests.marketplace.catalog.platform import READINGS, CatalogWorld, api_sign_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_violations")]


@pytest.fixture(params=READINGS)
def reading(request: pytest.FixtureRequest) -> str:
    """Every test here runs under both readings of the silent points."""
    return str(request.param)


DEFAULT_MAPS = {
    "SKU": "id",
    "Marketplace listing id": "mp_listing_id",
    "Statut de l'annonce": "mp_status",
    "Raison du refus": "mp_reason",
    "Lien de l'annonce": "mp_listing_url",
    "Dernière mise à jour": "mp_updated_at",
}


@pytest.fixture
def with_feed(world: CatalogWorld, seller: Seller, staff_user: Any) -> CatalogSource:
    api_sign_in(world, staff_user)
    source = database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )
    return provision.feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )


def sandbox_imports(source: CatalogSource) -> list[dict[str, Any]]:
    with api_user.platform_api() as api:
        return api.imports.list(db_id=source.db_id)


def staff_page(staff_user: Any, seller: Seller) -> str:
    client = Client()
    client.force_login(staff_user)
    response = client.get(f"/dashboard/catalog/sellers/{seller.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def import_calls(source: CatalogSource) -> list[tuple[str, str, int]]:
    prefix = f"/dbs/{source.db_id}/imports"
    return [
        (method, path.removeprefix(prefix), status)
        for method, path, status in PlatformCall.objects.filter(path__startswith=prefix)
        .order_by("id")
        .values_list("method", "path", "status")
    ]


def test_the_feed_brings_its_import_created_mapped_scheduled_and_read_back(
    world: CatalogWorld, seller: Seller, staff_user: Any, settings: Any, reading: str
) -> None:
    # EDRTS off: the import alone brings statuses back, hourly (with EDRTS: daily,
    # test_status_sync.py)
    StatusSync.objects.create(seller=seller, edrts_enabled=False)
    api_sign_in(world, staff_user)
    source = database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )

    source, import_error = join_import.catalog_feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )

    assert import_error == ""
    status_import = StatusImport.objects.get(source=source)
    assert status_import.is_active
    # Hourly at minute 15; a platform that refuses hour "*" (reading B) runs it daily just
    # after the feed (02:00), and the record says why
    if reading == "A":
        expected, words = "15 * * * *", "every hour at minute 15"
        assert status_import.schedule_note == ""
    else:
        expected, words = "15 2 * * *", "daily at 02:15 UTC"
        assert status_import.schedule_note.startswith(
            "the platform refused an hourly schedule (it said “hour: must be a number from 0"
        )
    assert (status_import.cron, status_import.join_key) == (expected, "id")
    held = world.sandbox.control("GET", f"/imports/{status_import.import_id}")["import"]
    assert held["join_type"] == "join_info"
    assert held["file_location"] == "url"
    assert held["url"] == join_import.status_file_url(status_import.status_key)
    assert held["url"].startswith(f"{settings.APP_BASE_URL}/catalog/status/")
    assert held["username"] == status_import.username
    assert "password" not in held
    assert held["join_key"] == "id"
    if reading == "A":
        assert held["cron"] == expected
        # The platform decoded the hex keys back to the file's exact column names
        assert held["file_map"]["maps"] == DEFAULT_MAPS
        assert list(held["file_map"]["maps"]) == list(HEADER)
    else:
        assert "cron" not in held
        assert held["file_map"]["maps"] == {hex_key(k): v for k, v in DEFAULT_MAPS.items()}
        assert list(held["file_map"]["maps"]) == [hex_key(name) for name in HEADER]
    assert held_maps(held) == DEFAULT_MAPS
    assert (held["encode_source_file_keys"], held["name_based_maps"]) == ("1", "1")
    # We write the header ourselves: nothing for the platform to clean
    assert held["clean_file_headers"] == "0"
    # In the order the platform requires, each once
    sent = [(m, p) for m, p, _ in import_calls(source)]
    iid = status_import.import_id
    schedule_calls = [("PUT", f"/{iid}/schedule")] * (1 if reading == "A" else 2)
    assert sent == [
        ("POST", ""),
        ("PUT", f"/{iid}/delimiters"),
        ("PUT", f"/{iid}/file_map"),
        *schedule_calls,
        ("GET", f"/{iid}"),
    ]
    page = staff_page(staff_user, seller)
    assert status_import.import_id in page
    assert expected in page
    assert words in page
    if reading == "B":
        assert "daily at 02:15 UTC</span> — " in page
        assert "the platform refused an hourly schedule" in page


def test_hex_keys_the_platform_cannot_match_are_refused_naming_the_key(
    with_feed: CatalogSource,
) -> None:
    status_import = join_import.status_import_provision(source=with_feed)
    maps = {hex_key(name): target for name, target in DEFAULT_MAPS.items()}

    def refusal(extra: dict[str, str]) -> str:
        body = file_map_body(delimiters=join_import.DELIMITERS, maps={}, ignore_join={})
        body["maps"] = {**maps, **extra}
        with api_user.platform_api() as api, pytest.raises(PlatformRejected) as refused:
            api.imports.file_map(
                db_id=with_feed.db_id, import_id=status_import.import_id, body=body
            )
        assert refused.value.status == 400
        return refused.value.message

    assert refusal({"zz": "x1"}) == 'maps: key "zz" is not lowercase hex of a UTF-8 column name'
    upper = hex_key("Prix €").upper()
    assert refusal({upper: "x2"}) == (
        f'maps: key "{upper}" is not lowercase hex of a UTF-8 column name'
    )
    missing = hex_key("Prix €")
    assert refusal({missing: "x3"}) == (
        f'maps: column "Prix €" (key "{missing}") is not in the file\'s header'
    )


def test_file_map_before_delimiters_is_refused_with_the_platforms_message(
    with_feed: CatalogSource,
) -> None:
    source = with_feed
    with api_user.platform_api() as api:
        created = api.imports.create(
            db_id=source.db_id,
            settings={
                "name": "direct",
                "join_type": "join_info",
                "file_location": "url",
                "url": "http://127.0.0.1:9/none.csv",
                "join_key": "id",
            },
        )
        with pytest.raises(PlatformRejected) as refused:
            api.imports.file_map(
                db_id=source.db_id,
                import_id=str(created["id"]),
                body=file_map_body(
                    delimiters=join_import.DELIMITERS, maps={"SKU": "id"}, ignore_join={}
                ),
            )
        api.imports.delete(db_id=source.db_id, import_id=str(created["id"]))
        assert isinstance(api.imports.auto_detected(db_id=source.db_id), list)

    assert refused.value.status == 400
    assert refused.value.message == "Set the import's delimiters before its file map."


def test_a_provisioning_that_skips_delimiters_shows_the_message_and_leaves_nothing(
    with_feed: CatalogSource, seller: Seller, staff_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a client that (wrongly) never sets the delimiters
    monkeypatch.setattr(ImportsApi, "delimiters", lambda self, **kwargs: {})

    with pytest.raises(CatalogError) as refused:
        join_import.status_import_provision(source=with_feed)

    assert "Set the import's delimiters before its file map." in str(refused.value)
    assert sandbox_imports(with_feed) == []
    status_import = StatusImport.objects.get(source=with_feed)
    assert status_import.state == StatusImport.State.FAILED
    assert (status_import.status_key, status_import.cleanup_id) == (None, "")
    page = staff_page(staff_user, seller)
    assert "Set the import&#x27;s delimiters before its file map." in page
    assert 'id="import-button"' in page  # staff can retry


def test_a_target_the_platform_refuses_shows_its_message_and_leaves_nothing(
    with_feed: CatalogSource, seller: Seller, staff_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app's own check is bypassed so the platform's rule is what refuses the name
    import re

    monkeypatch.setattr(join_import, "FIELD_NAME", re.compile(r".+"))

    with pytest.raises(CatalogError):
        join_import.status_import_provision(source=with_feed, targets={"status": "mp status"})

    message = 'maps: target "mp status" is not a valid field name'
    status_import = StatusImport.objects.get(source=with_feed)
    assert message in status_import.last_error
    assert "the platform said" in status_import.last_error
    assert sandbox_imports(with_feed) == []
    assert message.replace('"', "&quot;") in staff_page(staff_user, seller)


def test_an_import_created_but_whose_answer_was_lost_is_found_and_deleted(
    with_feed: CatalogSource, world: CatalogWorld
) -> None:
    # The platform creates the import, then the answer is lost (a 500 after the write).
    world.sandbox.set_faults(endpoint="add_import", kind="500", count=1, after_view=True)

    with pytest.raises(CatalogError):
        join_import.status_import_provision(source=with_feed)

    assert sandbox_imports(with_feed) == []  # the orphan was found by its URL and deleted
    status_import = StatusImport.objects.get(source=with_feed)
    assert (status_import.state, status_import.cleanup_id) == (StatusImport.State.FAILED, "")


def test_targets_staff_change_are_put_again_and_read_back(with_feed: CatalogSource) -> None:
    status_import = join_import.status_import_provision(source=with_feed)

    join_import.status_import_targets_set(
        source=with_feed,
        targets={**DEFAULT_TARGETS, "status": "marketplace_state"},
    )

    held = with_feed_import(with_feed, status_import)
    assert held_maps(held)["Statut de l'annonce"] == "marketplace_state"
    status_import.refresh_from_db()
    assert status_import.targets["status"] == "marketplace_state"
    with pytest.raises(CatalogError):
        join_import.status_import_targets_set(source=with_feed, targets={"status": "price"})


def held_maps(held: dict[str, Any]) -> dict[str, str]:
    """An import's ``file_map.maps`` by column name, keyed by names (reading A) or by the hex
    keys we sent (reading B)."""
    pairs = maps_pairs(held["file_map"]["maps"], encoded=True, columns=frozenset(DEFAULT_MAPS))
    return dict(pairs)


def with_feed_import(source: CatalogSource, status_import: StatusImport) -> dict[str, Any]:
    with api_user.platform_api() as api:
        return api.imports.get(db_id=source.db_id, import_id=status_import.import_id)


def test_rotating_credentials_rotates_the_feed_and_the_status_file_together(
    with_feed: CatalogSource, world: CatalogWorld
) -> None:
    status_import = join_import.status_import_provision(source=with_feed)
    feed_hash, status_hash = with_feed.feed_password_hash, status_import.password_hash

    credential_rotation.catalog_credentials_rotate(source=with_feed)

    with_feed.refresh_from_db()
    status_import.refresh_from_db()
    assert with_feed.feed_password_hash != feed_hash
    assert status_import.password_hash != status_hash
    export = world.sandbox.export_state(with_feed.export_id)["export"]
    assert provision.feed_password_hash(export["password"]) == with_feed.feed_password_hash
    # The platform's import now reads the file with the new password (the old one is refused)
    summary = world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})
    assert summary["error_flag"] in (0, False, "0"), summary
    url = join_import.status_file_url(status_import.status_key)
    assert requests.get(url, auth=(status_import.username, "old"), timeout=10).status_code == 401


def test_the_status_sweep_reads_the_last_run_and_removing_the_feed_removes_the_import(
    with_feed: CatalogSource, world: CatalogWorld
) -> None:
    status_import = join_import.status_import_provision(source=with_feed)
    world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})

    assert join_import.status_import_status_sweep() == 1

    status_import.refresh_from_db()
    assert status_import.last_log.get("message")
    assert status_import.last_download_time
    assert not status_import.last_run_failed
    url = join_import.status_file_url(status_import.status_key)

    join_import.catalog_feed_remove(source=with_feed)

    assert sandbox_imports(with_feed) == []
    status_import.refresh_from_db()
    assert (status_import.state, status_import.import_id) == ("none", "")
    assert requests.get(url, auth=("x", "y"), timeout=10).status_code == 404


def test_an_import_that_cannot_be_deleted_is_left_to_the_cleanup_sweep(
    with_feed: CatalogSource, world: CatalogWorld, seller: Seller, staff_user: Any
) -> None:
    world.sandbox.set_faults(
        {"endpoint": "import_schedule", "kind": "500", "count": 1},
        {"endpoint": "delete_import", "kind": "500", "count": 4},
    )

    with pytest.raises(CatalogError):
        join_import.status_import_provision(source=with_feed)

    status_import = StatusImport.objects.get(source=with_feed)
    assert status_import.cleanup_id
    assert len(sandbox_imports(with_feed)) == 1
    assert "Clean-up pending" in staff_page(staff_user, seller)

    world.sandbox.clear_faults()
    assert sweeps.provisioned_cleanup_sweep() == 1

    assert sandbox_imports(with_feed) == []
    status_import.refresh_from_db()
    assert status_import.cleanup_id == ""


def test_staff_retry_the_set_up_change_targets_and_rotate_credentials_from_the_page(
    with_feed: CatalogSource, seller: Seller, staff_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client()
    client.force_login(staff_user)
    base = f"/dashboard/catalog/sellers/{seller.pk}"
    with monkeypatch.context() as patched:
        patched.setattr(ImportsApi, "delimiters", lambda self, **kwargs: {})
        client.post(f"{base}/import/")
    assert StatusImport.objects.get(source=with_feed).state == "failed"

    # Retry
    response = client.post(f"{base}/import/", follow=True)
    assert "The listing-status import is set up at the platform." in response.content.decode()
    status_import = StatusImport.objects.get(source=with_feed)
    assert status_import.is_active
    assert status_import.last_error == ""
    # Targets: a bad name is refused by the form, a good one reaches the platform
    bad = client.post(f"{base}/import/targets/", {"status": "1bad"}, follow=True)
    assert "Listing status: Letters, digits and _" in bad.content.decode()
    good = {**DEFAULT_TARGETS, "reason": "why_refused"}
    client.post(f"{base}/import/targets/", good)
    assert held_maps(with_feed_import(with_feed, status_import))["Raison du refus"] == (
        "why_refused"
    )
    # Rotate: asks first, then both passwords change
    hashes = (with_feed.feed_password_hash, status_import.password_hash)
    assert (
        "Rotate the catalog credentials"
        in client.post(f"{base}/credentials/rotate/").content.decode()
    )
    client.post(f"{base}/credentials/rotate/", {"confirmed": "yes"})
    with_feed.refresh_from_db()
    status_import.refresh_from_db()
    assert with_feed.feed_password_hash != hashes[0]
    assert status_import.password_hash != hashes[1]


def test_staff_asking_for_every_hour_get_it_or_are_told_what_was_set(
    with_feed: CatalogSource, reading: str
) -> None:
    join_import.status_import_provision(source=with_feed)

    changed = join_import.status_import_schedule_set(
        source=with_feed, day="*", hour="*", minute="40", paused=True
    )

    if reading == "A":
        assert (changed.cron, changed.schedule_note) == ("40 * * * *", "")
    else:
        # Refused: daily, the first minute 40 after the feed's 02:00 run, and the page says so
        assert changed.cron == "40 2 * * *"
        assert changed.schedule_note.startswith("the platform refused an hourly schedule")
    assert changed.paused is True
    assert StatusImport.objects.get(source=with_feed).cron == changed.cron
    # A schedule set as asked forgets the note
    again = join_import.status_import_schedule_set(
        source=with_feed, day="2", hour="5", minute="0", paused=False
    )
    assert (again.cron, again.schedule_note, again.paused) == ("0 5 * * 2", "", False)
