"""The listing-status import's file map: hex keys the app computes decode back to the status
file's exact column names; target fields staff may choose are checked before anything
reaches the platform."""

from __future__ import annotations

import pytest

from marketplace.catalog.errors import CatalogError
from marketplace.catalog.listing_status.join_import import (
    DELIMITERS,
    hourly_fallback_hour,
    maps_held,
    status_maps,
    targets_validate,
)
from marketplace.catalog.listing_status.status_file import DEFAULT_TARGETS, HEADER
from marketplace.catalog.models import CatalogSource
from marketplace.catalog.provisioned import schedule_in_words
from marketplace.platform.imports import file_map_body, hex_key


def test_hex_key_is_lowercase_hex_of_the_utf8_bytes() -> None:
    assert hex_key("id") == "6964"
    assert hex_key("Prix €") == "50726978 20e282ac".replace(" ", "")
    assert hex_key("Note 👍") == "4e6f746520f09f918d"


def test_the_file_map_sent_decodes_back_to_the_exact_header_names() -> None:
    maps = status_maps(join_key="id", targets=DEFAULT_TARGETS)

    body = file_map_body(delimiters=DELIMITERS, maps=maps, ignore_join={})

    decoded = {bytes.fromhex(key).decode("utf-8"): target for key, target in body["maps"].items()}
    assert list(decoded) == list(HEADER)
    assert decoded == {
        "SKU": "id",
        "Marketplace listing id": "mp_listing_id",
        "Statut de l'annonce": "mp_status",
        "Raison du refus": "mp_reason",
        "Lien de l'annonce": "mp_listing_url",
        "Dernière mise à jour": "mp_updated_at",
    }
    assert all(key == key.lower() for key in body["maps"])
    # Every field of the file map is there, as strings (the platform requires them all)
    assert body == {
        "encoding": "UTF-8",
        "separator": ",",
        "enclosure": '"',
        "escaper": '"',
        "file_type": "delimited",
        "maps": body["maps"],
        "ignore_join": {},
        "name_based_maps": "1",
        "encode_source_file_keys": "1",
        "clean_file_headers": "0",
    }


def test_the_status_files_header_has_nothing_a_platform_would_clean() -> None:
    # clean_file_headers is 0: the header must need no trimming of its own
    for name in HEADER:
        assert name == name.strip()
        assert "\ufeff" not in name
        assert name.isprintable()


@pytest.mark.parametrize("as_sent", [False, True], ids=["decoded", "hex"])
def test_a_file_map_read_back_is_compared_as_pairs_whichever_way_it_is_keyed(
    as_sent: bool,
) -> None:
    maps = status_maps(join_key="id", targets=DEFAULT_TARGETS)
    held = {hex_key(k) if as_sent else k: v for k, v in reversed(maps.items())}

    assert maps_held({"maps": held}, maps)
    assert not maps_held({"maps": {**held, hex_key("Extra") if as_sent else "Extra": "x"}}, maps)
    assert not maps_held({"maps": {**held, next(iter(held)): "other"}}, maps)
    assert not maps_held({}, maps)


def source_with_fields() -> CatalogSource:
    return CatalogSource(
        seller_id=1,
        account_id="1",
        db_id="1",
        export_fields=[["sku", "id"], ["price", "price"], ["quantity", "stock"]],
    )


def test_target_fields_must_be_field_names_unused_by_the_feed_and_distinct() -> None:
    source = source_with_fields()
    assert targets_validate(source=source, targets={}) == DEFAULT_TARGETS

    with pytest.raises(CatalogError) as refused:
        targets_validate(
            source=source,
            targets={"status": "mp status", "reason": "price", "listing_url": "mp_listing_id"},
        )

    message = str(refused.value)
    assert "“mp status” (Statut de l'annonce) is not a field name" in message
    assert "“price” (Raison du refus) is a field the feed reads" in message
    assert "“mp_listing_id” is used twice" in message


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("15 * * * *", "every hour at minute 15"),
        ("15 2 * * *", "daily at 02:15 UTC"),
        ("45 3 * * 1", "Mondays at 03:45 UTC"),
        ("", "none"),
        ("*/5 * * * *", "*/5 * * * *"),
    ],
)
def test_a_schedule_reads_in_plain_words(cron: str, words: str) -> None:
    assert schedule_in_words(cron) == words


@pytest.mark.parametrize(
    ("feed_cron", "minute", "hour"),
    [
        ("0 2 * * *", "15", "2"),
        ("30 2 * * *", "15", "3"),
        ("0 23 * * *", "0", "0"),
        ("", "15", "2"),
    ],
)
def test_a_refused_hourly_import_runs_daily_just_after_the_feed(
    feed_cron: str, minute: str, hour: str
) -> None:
    source = CatalogSource(seller_id=1, account_id="1", db_id="1", cron=feed_cron)
    assert hourly_fallback_hour(source, minute) == hour
