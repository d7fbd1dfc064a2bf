"""The app's Platform API client under both readings of issue 29's points, over HTTP
against the sandbox: an import read back behind a preprocess script (what we set is read
from ``import_info``), an export's log time without a zone (read as UTC), and an "unset
schedule" answer that still shows a cron (the request is trusted: nothing scheduled)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from marketplace.catalog.provisioned import schedule_in_words
from marketplace.platform.dates import from_platform
from marketplace.platform.exports import ExportsApi
from marketplace.platform.imports import ImportsApi, import_as_set
from marketplace.platform.transport import ApiKeyTransport
from tests.sandbox.platform_api.test_export_delivery import Destination, destination
from tests.support.sandbox_process import SandboxProcess

__all__ = ["destination"]  # a fixture used below

USERNAME, PASSWORD, EMAIL = "readings-29", "readings-29-pass", "readings-29@mp.example"
URL = "http://127.0.0.1:9/listing-status.csv"


def transport_for(sandbox: SandboxProcess) -> tuple[ApiKeyTransport, str]:
    sandbox.reset()
    db = sandbox.db_create(
        "Readings catalog",
        account_name="Readings Shop",
        rows=[{"id": "A-1", "price": "12.50"}],
        fields=["id", "price"],
    )
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    token = sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="app")
    return ApiKeyTransport(base_url=sandbox.platform_url, token=token, api_user=USERNAME), str(
        db["id"]
    )


def import_settings() -> dict[str, Any]:
    return {
        "name": "Listing status",
        "join_type": "join_info",
        "file_name": "listing-status.csv",
        "file_location": "url",
        "url": URL,
        "username": "u",
        "password": "p",
        "join_key": "id",
    }


@pytest.mark.parametrize("reading", ["A", "B"])
def test_what_we_set_on_an_import_is_read_back_under_either_reading(
    sandbox: SandboxProcess, reading: str
) -> None:
    transport, db_id = transport_for(sandbox)
    sandbox.readings(import_file_location=reading)
    imports = ImportsApi(transport)

    created = imports.create(db_id=db_id, settings=import_settings())
    read = imports.get(db_id=db_id, import_id=str(created["id"]))
    (listed,) = imports.list(db_id=db_id)

    for record in (created, read, listed):
        assert (record["file_location"], record["url"]) == ("url", URL)
        assert record["file_name"] == "listing-status.csv"
        # What the platform adds is kept, never compared.
        assert ("preprocess_info" in record) is (reading == "B")


def test_a_field_the_platform_holds_itself_is_not_overwritten() -> None:
    record = {"file_location": "url", "url": "https://x/a.csv", "import_info": {"url": "other"}}
    assert import_as_set(record)["url"] == "https://x/a.csv"
    assert import_as_set({"id": "1"}) == {"id": "1"}


@pytest.mark.parametrize("reading", ["A", "B"])
def test_an_unset_schedule_is_not_scheduled_whatever_the_answer_shows(
    sandbox: SandboxProcess, reading: str
) -> None:
    transport, db_id = transport_for(sandbox)
    sandbox.readings(unset_schedule_cron=reading)
    imports = ImportsApi(transport)
    import_id = str(imports.create(db_id=db_id, settings=import_settings())["id"])

    scheduled = imports.schedule(db_id=db_id, import_id=import_id, day="*", hour="3", minute="15")
    unset = imports.schedule(db_id=db_id, import_id=import_id, day="-1", hour="-1", minute="-1")

    assert scheduled["cron"] == "15 3 * * *"
    assert unset["cron"] is None
    assert schedule_in_words(unset["cron"] or "") == "none"
    raw = [e for e in sandbox.requests_log(limit=5) if e["path"].endswith("/schedule")]
    assert raw  # the answer went over HTTP


@pytest.mark.parametrize("reading", ["A", "B"])
def test_an_exports_log_time_is_read_as_utc_under_either_reading(
    sandbox: SandboxProcess, destination: Destination, reading: str
) -> None:
    transport, db_id = transport_for(sandbox)
    sandbox.readings(export_log_time=reading)
    exports = ExportsApi(transport)
    export = exports.add(
        db_id=db_id,
        export={
            "name": "feed",
            "protocol": "http",
            "host": destination.folder,
            "file_name": "feed.csv",
            "username": "feed",
            "password": "pw",
            "export_fields": [{"field_name": "id", "export_field_name": "sku"}],
        },
    )
    before = datetime.now(UTC).replace(microsecond=0)
    assert sandbox.export_run(export["id"])["status"] == "success"

    read = exports.get(db_id=db_id, export_id=str(export["id"]))
    (listed,) = exports.list(db_id=db_id)

    for record in (read, listed):
        moment = datetime.fromisoformat(record["last_log"]["time"])
        assert moment.utcoffset() is not None
        assert moment.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert moment >= before
        assert record["last_log"]["error_flag"] == "0"


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("2023-01-29 00:02:53", datetime(2023, 1, 29, 0, 2, 53, tzinfo=UTC)),
        ("2023-01-29T02:02:53+02:00", datetime(2023, 1, 29, 0, 2, 53, tzinfo=UTC)),
        ("2023-01-29T00:02:53Z", datetime(2023, 1, 29, 0, 2, 53, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (None, None),
        (1675000000, None),
    ],
)
def test_platform_times_are_read_without_ever_failing(text: Any, read: datetime | None) -> None:
    assert from_platform(text) == read
