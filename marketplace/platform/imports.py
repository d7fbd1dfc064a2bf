"""The Platform API's imports of a seller's database (``/dbs/{db_id}/imports…``).

Facts from shared/spec/platform-api-contract.md and the pinned decisions of issue 13:
list ``GET``, create ``POST`` (answers the import), one ``GET``, update ``POST`` on the
import (merged, answers the import), delete ``DELETE`` → ``{}``, schedule ``PUT …/schedule``
as for exports, ``PUT …/delimiters`` before ``PUT …/file_map`` (every field of the file map
required), and ``GET …/auto_detected``. Every value of an import is a string; the
platform never answers the import's password.

Answers may carry fields we do not know (additive changes); we read only what we need.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import re
from dataclasses import dataclass
from typing import Any

from marketplace.platform.db_resources import DatabaseResourceApi
from marketplace.platform.db_resources import flag as _flag
from marketplace.platform.errors import PlatformMalformedResponse


@dataclass(frozen=True)
class Delimiters:
    """How the platform reads the file: the characters themselves (``,`` ``"``), and an
    escaper of ``"`` meaning doubled quotes (RFC 4180)."""

    encoding: str = "UTF-8"
    separator: str = ","
    enclosure: str = '"'
    escaper: str = '"'
    file_type: str = "delimited"

    def as_body(self) -> dict[str, str]:
        return {
            "encoding": self.encoding,
            "separator": self.separator,
            "enclosure": self.enclosure,
            "escaper": self.escaper,
            "file_type": self.file_type,
        }


def hex_key(column: str) -> str:
    """A source column's key when ``encode_source_file_keys`` is 1: the lowercase hex of
    its UTF-8 bytes (``id`` → ``6964``), so names with spaces, accents or separators
    travel intact."""
    return column.encode("utf-8").hex()


_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})+$")


def maps_pairs(
    maps: Any, *, encoded: bool, columns: frozenset[str] = frozenset()
) -> set[tuple[str, str]]:
    """A ``maps`` object read back, as {(source column name, target field)}.

    The platform may key it by the decoded column names (the interface says the file-map
    answer holds decoded names) or as sent, hex when ``encode_source_file_keys`` was 1
    (another reading, for the answer and the import record alike). With ``encoded``, a
    key that is not one of the ``columns`` we sent and reads as the hex of UTF-8 text is
    decoded; anything else is taken as a name. Not an object → the empty set."""
    if not isinstance(maps, dict):
        return set()
    pairs = set()
    for key, target in maps.items():
        column = str(key)
        if encoded and column not in columns and _HEX.match(column):
            with contextlib.suppress(UnicodeDecodeError):  # not hex of text: a name
                column = bytes.fromhex(column).decode("utf-8")
        pairs.add((column, str(target)))
    return pairs


def file_map_body(
    *,
    delimiters: Delimiters,
    maps: dict[str, str],
    ignore_join: dict[str, Any] | list[Any] | None = None,
    name_based_maps: bool = True,
    encode_source_file_keys: bool = True,
    clean_file_headers: bool = False,
) -> dict[str, Any]:
    """The ``file_map`` request: ``maps`` is {source column name: target field}; with
    ``encode_source_file_keys`` its keys are sent hex-encoded. ``clean_file_headers`` is
    off unless asked for: a platform may read it as "normalise the names" too (lowercase,
    ``_``), and then the columns mapped by their exact names are no longer found."""
    body: dict[str, Any] = delimiters.as_body()
    body["maps"] = (
        {hex_key(column): target for column, target in maps.items()}
        if encode_source_file_keys
        else dict(maps)
    )
    body["ignore_join"] = {} if ignore_join is None else ignore_join
    body["name_based_maps"] = _flag(name_based_maps)
    body["encode_source_file_keys"] = _flag(encode_source_file_keys)
    body["clean_file_headers"] = _flag(clean_file_headers)
    return body


def file_map_decoded(answer: dict[str, Any]) -> dict[str, Any]:
    """The ``file_map`` answer's text (JSON, our choice) as an object."""
    text = answer.get("file_map")
    if isinstance(text, dict):
        return text  # tolerate an object where the contract says text
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise PlatformMalformedResponse("file_map answer without a readable file_map", status=200)
    return data


# What an import's record may hold under ``import_info`` when the platform answers it
# behind a preprocess script (``file_location: preprocess_script``, the reference's create
# and update examples): the settings we sent, read from there.
SET_BY_US = ("file_location", "file_name", "url", "username", "host", "protocol")
PREPROCESS = "preprocess_script"


def import_as_set(record: dict[str, Any]) -> dict[str, Any]:
    """An import's record with the settings we set where we set them: when the platform
    shows ``file_location`` ``preprocess_script``, ``import_info`` holds ours (fields it
    adds, like ``preprocess_info``, are kept and never compared)."""
    info = record.get("import_info")
    if not isinstance(info, dict):
        return record
    lifted = dict(record)
    for key in SET_BY_US:
        value = info.get(key)
        if value in (None, ""):
            continue
        # Only what the record lacks, or hides behind the preprocess script.
        hidden = key == "file_location" and record.get(key) == PREPROCESS
        if hidden or record.get(key) in (None, ""):
            lifted[key] = value
    return lifted


class ImportsApi(DatabaseResourceApi):
    resource = "imports"
    singular = "import"

    def _read(self, record: dict[str, Any]) -> dict[str, Any]:
        return import_as_set(super()._read(record))

    def list(self, *, db_id: str) -> list[dict[str, Any]]:
        return self._list(self.transport.request("GET", self._path(db_id)), "imports")

    def create(self, *, db_id: str, settings: dict[str, Any]) -> dict[str, Any]:
        return self._one(self.transport.request("POST", self._path(db_id), json_body=settings))

    def get(self, *, db_id: str, import_id: str) -> dict[str, Any]:
        return self._one(self.transport.request("GET", self._path(db_id, import_id)))

    def update(self, *, db_id: str, import_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._one(
            self.transport.request("POST", self._path(db_id, import_id), json_body=changes)
        )

    def delete(self, *, db_id: str, import_id: str) -> None:
        self.transport.request("DELETE", self._path(db_id, import_id))

    def schedule(
        self,
        *,
        db_id: str,
        import_id: str,
        day: str | None = None,
        hour: str | None = None,
        minute: str | None = None,
        paused: bool | None = None,
    ) -> dict[str, Any]:
        return self._schedule(db_id, import_id, day=day, hour=hour, minute=minute, paused=paused)

    def delimiters(self, *, db_id: str, import_id: str, delimiters: Delimiters) -> dict[str, Any]:
        return self._one(
            self.transport.request(
                "PUT", self._path(db_id, import_id, "/delimiters"), json_body=delimiters.as_body()
            )
        )

    def file_map(self, *, db_id: str, import_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Send a ``file_map`` request (see ``file_map_body``); the answer as given:
        ``{"file_map": <JSON text>, "name_based_maps", "clean_file_headers"}``."""
        data = self.transport.request(
            "PUT", self._path(db_id, import_id, "/file_map"), json_body=body
        )
        if not isinstance(data, dict) or "file_map" not in data:
            raise PlatformMalformedResponse("file_map answer without file_map", status=200)
        return data

    # builtins.list: in this class, ``list`` is the method above.
    def auto_detected(self, *, db_id: str) -> builtins.list[dict[str, Any]]:
        return self._list(
            self.transport.request("GET", self._path(db_id, tail="/auto_detected")),
            "auto-detected imports",
        )
