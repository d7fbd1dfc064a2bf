"""The Platform API's imports over real HTTP: the import object round trip (every value a
string, the password never answered), schedule, delete, 404s; delimiters before the file
map; every file_map field required; hex-encoded source keys checked against the header of
a real file the sandbox fetches from a small HTTP server in this test process.

The file server and the setup helpers here are shared with test_platform_imports_runs.py.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess

FILE_USER, FILE_PASSWORD = "status-reader", "status-secret"
IMPORT_KEYS = {
    "id", "db_id", "name", "status", "join_type", "file_location", "file_name", "url",
    "username", "file_type", "file_map", "name_based_maps", "encode_source_file_keys",
    "clean_file_headers", "join_key", "timeout", "max_attempts", "time_between_attempts",
    "tags", "running", "cron", "paused", "last_download_time", "last_log",
}  # fmt: skip
NON_STRING = {"file_map", "tags", "last_log", "cron"}
DELIMITERS = {
    "encoding": "UTF-8",
    "separator": ",",
    "enclosure": '"',
    "escaper": '"',
    "file_type": "delimited",
}
# Column names with spaces, an accent and a euro sign, an emoji, and a separator inside
# quotes: exactly what the marketplace's status file may carry.
HEADER = ["SKU", "Prix €", "Note 👍", "Taille, pointure", "Statut de l'annonce"]
STATUS_CSV = (
    'SKU,Prix €,Note 👍,"Taille, pointure",Statut de l\'annonce\n'
    'A-1,12.50,5,"42, EU",live\n'
    "A-3,7.25,4,M,rejected\n"
).encode()


def hexkey(name: str) -> str:
    return name.encode("utf-8").hex()


class FileServer:
    """Files served over HTTP Basic to the sandbox; ``fail_with`` answers statuses first."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.fail_with: list[int] = []
        self.hits: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.hits.append(self.path)
                expected = base64.b64encode(f"{FILE_USER}:{FILE_PASSWORD}".encode()).decode()
                if self.headers.get("Authorization") != f"Basic {expected}":
                    self._answer(401, b"who are you?")
                elif server.fail_with:
                    self._answer(server.fail_with.pop(0), b"not now")
                elif self.path not in server.files:
                    self._answer(404, b"no such file")
                else:
                    self._answer(200, server.files[self.path])

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/csv; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def serve(self, path: str, content: bytes) -> str:
        self.files[path] = content
        return self.base_url + path

    def start(self) -> FileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def files() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()


CATALOG_FIELDS = ["id", "title", "price", "quantity", "brand"]
CATALOG_ROWS = [
    {"id": "A-1", "title": "Mug", "price": "12.50", "quantity": "3", "brand": "Acme"},
    {"id": "A-2", "title": "Plate", "price": "4.00", "quantity": "0", "brand": ""},
    {"id": "A-3", "title": "Bowl", "price": "7.25", "quantity": "12", "brand": "Acme"},
]


@pytest.fixture
def api(sandbox: SandboxProcess) -> PlatformApi:
    return platform_for(sandbox, rows=CATALOG_ROWS, fields=CATALOG_FIELDS)


def add_import(api: PlatformApi, **settings: Any) -> dict:
    body = {
        "name": "Listing status",
        "join_type": "join_info",
        "file_name": "listing-status.csv",
        "file_location": "url",
        "url": "http://127.0.0.1:9/listing-status.csv",
        "username": FILE_USER,
        "password": FILE_PASSWORD,
        "join_key": "id",
        "timeout": "5",
        "max_attempts": "2",
        "time_between_attempts": "0",
        "tags": ["marketplace"],
        **settings,
    }
    response = api.call("POST", f"/dbs/{api.db_id}/imports", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def put(api: PlatformApi, import_id: str, what: str, body: dict) -> Any:
    return api.call("PUT", f"/dbs/{api.db_id}/imports/{import_id}/{what}", json=body)


def file_map_body(maps: dict[str, str], **overrides: Any) -> dict:
    return {
        **DELIMITERS,
        "maps": maps,
        "ignore_join": [],
        "name_based_maps": "1",
        "encode_source_file_keys": "1",
        "clean_file_headers": "0",
        **overrides,
    }


STATUS_MAPS = {
    hexkey("SKU"): "id",
    hexkey("Prix €"): "mp_price",
    hexkey("Note 👍"): "mp_rating",
    hexkey("Taille, pointure"): "mp_size",
    hexkey("Statut de l'annonce"): "mp_status",
}


def mapped_import(
    api: PlatformApi, files: FileServer, content: bytes = STATUS_CSV, **kw: Any
) -> dict:
    """A join import of ``content`` with its delimiters and the status file map set."""
    url = files.serve("/listing-status.csv", content)
    created = add_import(api, url=url, **kw)
    assert put(api, created["id"], "delimiters", DELIMITERS).status_code == 200
    mapped = put(api, created["id"], "file_map", file_map_body(STATUS_MAPS))
    assert mapped.status_code == 200, mapped.text
    return created


def _assert_strings(item: dict) -> None:
    assert set(item) == IMPORT_KEYS
    for key, value in item.items():
        if key not in NON_STRING:
            assert isinstance(value, str), (key, value)
    assert all(isinstance(tag, str) for tag in item["tags"])


# -- CRUD, list, schedule, delete ---------------------------------------------------------


def test_create_answers_the_import_with_strings_and_never_the_password(api: PlatformApi) -> None:
    created = add_import(api, max_attempts=4, timeout=12.5)

    _assert_strings(created)
    assert created["db_id"] == api.db_id
    assert created["name"] == "Listing status"
    assert created["status"] == "new"
    assert created["join_type"] == "join_info"
    assert created["file_location"] == "url"
    assert created["username"] == FILE_USER
    assert created["max_attempts"] == "4"
    assert created["timeout"] == "12.5"
    assert created["running"] == "0"
    assert created["paused"] == "0"
    assert created["cron"] is None
    assert created["file_map"] == {}
    assert created["last_log"] == {}
    assert created["last_download_time"] == ""
    assert created["tags"] == ["marketplace"]
    assert FILE_PASSWORD not in json.dumps(created)


def test_list_get_update_and_delete(api: PlatformApi) -> None:
    first = add_import(api)
    second = add_import(api, name="Feed", join_type="product_feed", join_key="")
    base = f"/dbs/{api.db_id}/imports"

    listed = api.call("GET", base)
    got = api.call("GET", f"{base}/{first['id']}")
    updated = api.call("POST", f"{base}/{first['id']}", json={"name": "Renamed", "colour": "x"})
    deleted = api.call("DELETE", f"{base}/{second['id']}")
    deleted_again = api.call("DELETE", f"{base}/{second['id']}")
    after = api.call("GET", base)

    assert listed.status_code == 200
    assert [i["id"] for i in listed.json()] == [first["id"], second["id"]]
    for item in listed.json():
        _assert_strings(item)
        assert "password" not in item
    assert got.json() == first
    assert updated.status_code == 200
    assert updated.json()["name"] == "Renamed"
    assert updated.json()["url"] == first["url"]  # merged, not replaced
    assert deleted.status_code == 200
    assert deleted.json() == {}
    assert deleted_again.status_code == 404
    assert deleted_again.json()["status"] == "fail"
    assert [i["id"] for i in after.json()] == [first["id"]]
    assert "X-Rate-Limit-Remaining" in listed.headers


def test_unknown_imports_and_databases_answer_404(api: PlatformApi) -> None:
    base = f"/dbs/{api.db_id}/imports"
    for response in (
        api.call("GET", f"{base}/999"),
        api.call("GET", f"{base}/abc"),
        api.call("POST", f"{base}/999", json={"name": "x"}),
        api.call("PUT", f"{base}/999/schedule", json={"paused": "1"}),
        api.call("PUT", f"{base}/999/delimiters", json=DELIMITERS),
        api.call("GET", "/dbs/999/imports"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["status"] == "fail"


def test_closed_lists_and_ranges_are_refused_naming_the_field(api: PlatformApi) -> None:
    base = f"/dbs/{api.db_id}/imports"
    good = {"name": "x", "join_type": "join_info", "url": "http://h/f.csv", "join_key": "id"}
    cases = {
        "join_type": {**good, "join_type": "merge"},
        "file_location": {**good, "file_location": "ftp"},
        "max_attempts": {**good, "max_attempts": "11"},
        "timeout": {**good, "timeout": "soon"},
        "join_key": {**good, "join_key": "colour"},
        "url": {**good, "url": "ftp://h/f.csv"},
        "tags": {**good, "tags": "marketplace"},
    }
    for field, body in cases.items():
        response = api.call("POST", base, json=body)
        assert response.status_code == 400, (field, response.text)
        assert response.json()["message"].startswith(field), response.json()
    assert api.call("GET", base).json() == []


def test_schedule_sets_cron_pauses_and_unsets(api: PlatformApi) -> None:
    created = add_import(api)
    url = f"/dbs/{api.db_id}/imports/{created['id']}"

    set_ = put(api, created["id"], "schedule", {"day": "*", "hour": "3", "minute": "15"})
    scheduled = api.call("GET", url).json()
    paused = put(api, created["id"], "schedule", {"paused": "1"})
    unset = put(api, created["id"], "schedule", {"day": "-1", "hour": "-1", "minute": "-1"})
    bad = put(api, created["id"], "schedule", {"day": "1", "hour": "24", "minute": "0"})

    assert set_.status_code == 200
    assert set_.json() == {"cron": "15 3 * * *", "paused": 0}
    assert scheduled["cron"] == "15 3 * * *"
    assert paused.json() == {"cron": "15 3 * * *", "paused": 1}
    assert unset.json() == {"cron": None, "paused": 1}
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("hour")


def test_auto_detected_is_routed_before_an_import_id(api: PlatformApi) -> None:
    response = api.call("GET", f"/dbs/{api.db_id}/imports/auto_detected")

    assert response.status_code == 200
    assert response.json() == []


def test_databases_carry_the_status_of_their_imports(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    before = api.call("GET", f"/accounts/{api.account_id}/dbs").json()
    created = mapped_import(api, files)
    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    after = api.call("GET", f"/accounts/{api.account_id}/dbs").json()

    assert before[0]["import_status"] == "none"
    assert run["status"] == "success", run["message"]
    assert after[0]["import_status"] == "success"


# -- delimiters, then the file map ----------------------------------------------------------


def test_file_map_before_delimiters_is_refused_with_the_exact_message(
    api: PlatformApi, files: FileServer
) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))

    response = put(api, created["id"], "file_map", file_map_body(STATUS_MAPS))

    assert response.status_code == 400
    assert response.json() == {
        "status": "fail",
        "message": "Set the import's delimiters before its file map.",
    }


def test_delimiters_are_checked_and_answer_the_import(api: PlatformApi) -> None:
    created = add_import(api)

    set_ = put(api, created["id"], "delimiters", {**DELIMITERS, "separator": "\t"})
    missing = put(
        api, created["id"], "delimiters", {k: v for k, v in DELIMITERS.items() if k != "escaper"}
    )
    bad_encoding = put(api, created["id"], "delimiters", {**DELIMITERS, "encoding": "EBCDIC"})
    bad_type = put(api, created["id"], "delimiters", {**DELIMITERS, "file_type": "xml"})

    assert set_.status_code == 200
    _assert_strings(set_.json())
    assert set_.json()["file_map"]["separator"] == "\t"
    assert set_.json()["file_type"] == "delimited"
    assert missing.status_code == 400
    assert missing.json()["message"] == "escaper: required"
    assert bad_encoding.json()["message"].startswith("encoding")
    assert bad_type.json()["message"].startswith("file_type")


def test_every_file_map_field_is_required(api: PlatformApi, files: FileServer) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)
    full = file_map_body(STATUS_MAPS)

    for field in full:
        body = {k: v for k, v in full.items() if k != field}
        response = put(api, created["id"], "file_map", body)
        assert response.status_code == 400, field
        assert response.json()["message"] == f"{field}: required"


def test_hex_keys_round_trip_to_decoded_names(api: PlatformApi, files: FileServer) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)

    response = put(api, created["id"], "file_map", file_map_body(STATUS_MAPS))
    read_back = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()

    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"file_map", "name_based_maps", "clean_file_headers"}
    assert answer["name_based_maps"] == "1"
    assert answer["clean_file_headers"] == "0"
    text = json.loads(answer["file_map"])
    assert text["maps"] == {
        "SKU": "id",
        "Prix €": "mp_price",
        "Note 👍": "mp_rating",
        "Taille, pointure": "mp_size",
        "Statut de l'annonce": "mp_status",
    }
    assert text["ignore_join"] == []
    assert (text["encoding"], text["separator"], text["enclosure"], text["escaper"]) == (
        "UTF-8",
        ",",
        '"',
        '"',
    )
    assert read_back["file_map"]["maps"] == text["maps"]
    assert read_back["encode_source_file_keys"] == "1"
    assert files.hits == ["/s.csv"]  # the header came from the real file


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("zz", 'maps: key "zz" is not lowercase hex of a UTF-8 column name'),
        ("534", 'maps: key "534" is not lowercase hex of a UTF-8 column name'),
        ("534B55", 'maps: key "534B55" is not lowercase hex of a UTF-8 column name'),
        ("ff", 'maps: key "ff" is not lowercase hex of a UTF-8 column name'),
        (
            hexkey("Colour"),
            f'maps: column "Colour" (key "{hexkey("Colour")}") is not in the file\'s header',
        ),
    ],
)
def test_a_wrong_hex_key_is_refused_naming_it(
    api: PlatformApi, files: FileServer, key: str, message: str
) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)

    response = put(api, created["id"], "file_map", file_map_body({hexkey("SKU"): "id", key: "x"}))

    assert response.status_code == 400
    assert response.json()["message"] == message
    read_back = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()
    assert read_back["file_map"]["maps"] == {}


def test_targets_and_the_join_key_are_checked(api: PlatformApi, files: FileServer) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)

    bad_target = put(api, created["id"], "file_map", file_map_body({hexkey("SKU"): "mp status"}))
    no_join = put(api, created["id"], "file_map", file_map_body({hexkey("SKU"): "sku"}))

    assert bad_target.json()["message"] == 'maps: target "mp status" is not a valid field name'
    assert no_join.json()["message"] == 'join_key: no column of the file map targets "id"'


def test_an_unreadable_file_is_refused_naming_the_url(api: PlatformApi, files: FileServer) -> None:
    url = files.base_url + "/missing.csv"
    created = add_import(api, url=url)
    put(api, created["id"], "delimiters", DELIMITERS)

    response = put(api, created["id"], "file_map", file_map_body(STATUS_MAPS))

    assert response.status_code == 400
    assert response.json()["message"] == (
        f"maps: could not read the file's header from {url}: HTTP 404"
    )


def test_clean_file_headers_strips_a_bom_and_spaces(api: PlatformApi, files: FileServer) -> None:
    content = "\ufeff SKU ,  Statut de l'annonce\nA-1,live\n".encode()
    created = add_import(api, url=files.serve("/s.csv", content))
    put(api, created["id"], "delimiters", DELIMITERS)
    maps = {hexkey("SKU"): "id", hexkey("Statut de l'annonce"): "mp_status"}

    exact = put(api, created["id"], "file_map", file_map_body(maps, clean_file_headers="0"))
    cleaned = put(api, created["id"], "file_map", file_map_body(maps, clean_file_headers="1"))

    assert exact.status_code == 400
    assert exact.json()["message"].startswith('maps: column "SKU"')
    assert cleaned.status_code == 200, cleaned.text
    assert cleaned.json()["clean_file_headers"] == "1"


def test_positions_name_columns_when_name_based_maps_is_0(
    api: PlatformApi, files: FileServer
) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)

    hexed = put(
        api,
        created["id"],
        "file_map",
        file_map_body({hexkey("0"): "id", hexkey("4"): "mp_status"}, name_based_maps="0"),
    )
    plain = put(
        api,
        created["id"],
        "file_map",
        file_map_body(
            {"0": "id", "3": "mp_size"}, name_based_maps="0", encode_source_file_keys="0"
        ),
    )
    beyond = put(
        api,
        created["id"],
        "file_map",
        file_map_body({"0": "id", "5": "x"}, name_based_maps="0", encode_source_file_keys="0"),
    )

    assert hexed.status_code == 200, hexed.text
    assert json.loads(hexed.json()["file_map"])["maps"] == {"0": "id", "4": "mp_status"}
    assert hexed.json()["name_based_maps"] == "0"
    assert plain.status_code == 200, plain.text
    assert beyond.status_code == 400
    assert beyond.json()["message"] == 'maps: column "5" (key "5") is not in the file\'s header'
