"""The file map of an import (``PUT …/file_map``): every field required, source keys decoded
(lowercase hex of the column name's UTF-8 bytes with ``encode_source_file_keys`` ``1``),
checked against the header of the real file, and resolved to column positions for runs.
"""

import json
import re
from dataclasses import dataclass

from sandbox.common import switches
from sandbox.common.api_php.errors import ApiError
from sandbox.common.settings_merge import scalar
from sandbox.platform_api.imports.settings import DELIMITER_FIELDS, Dialect, dialect_of

FIELDS = (
    "encoding",
    "separator",
    "enclosure",
    "escaper",
    "maps",
    "ignore_join",
    "name_based_maps",
    "encode_source_file_keys",
    "clean_file_headers",
    "file_type",
)
FLAGS = ("name_based_maps", "encode_source_file_keys", "clean_file_headers")
TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
_POSITION = re.compile(r"0|[1-9][0-9]*")
NO_DELIMITERS = "Set the import's delimiters before its file map."


@dataclass(frozen=True)
class FileMapRequest:
    """A checked request: the delimiters, the maps as (key given, decoded source, target)."""

    delimiters: dict
    dialect: Dialect
    entries: list[tuple[str, str, str]]
    ignore_join: dict | list
    flags: dict[str, str]


def _flag(key: str, value: object) -> str:
    if value in ("0", "1", 0, 1) and not isinstance(value, bool):
        return str(value)
    raise ApiError(f'{key}: must be "0" or "1"')


def _decoded(key: str) -> str:
    """The column name (or position) a hex key holds; ApiError naming the key otherwise."""
    if _HEX.fullmatch(key):
        try:
            return bytes.fromhex(key).decode("utf-8")
        except UnicodeDecodeError:
            pass
    raise ApiError(f'maps: key "{key}" is not lowercase hex of a UTF-8 column name')


def file_map_request(*, body: dict, join_type: str, join_key: str) -> FileMapRequest:
    """Check a file_map body without the file (the header check comes after)."""
    for key in FIELDS:
        if key not in body:
            raise ApiError(f"{key}: required")
    flags = {key: _flag(key, body[key]) for key in FLAGS}
    dialect = dialect_of(body)
    delimiters = {key: scalar(key, body[key]) for key in DELIMITER_FIELDS}
    maps, ignore_join = body["maps"], body["ignore_join"]
    if not isinstance(ignore_join, dict | list):
        raise ApiError("ignore_join: must be an object or a list (may be empty)")
    if not isinstance(maps, dict) or not maps:
        raise ApiError("maps: must be an object of source column key to target field name")
    entries = []
    for key, target in maps.items():
        if not isinstance(target, str) or not TARGET.fullmatch(target):
            raise ApiError(f'maps: target "{target}" is not a valid field name')
        source = _decoded(key) if flags["encode_source_file_keys"] == "1" else key
        if flags["name_based_maps"] == "0" and not _POSITION.fullmatch(source):
            raise ApiError(f'maps: key "{key}" is not a column position (0, 1, 2, ...)')
        entries.append((key, source, target))
    targets = [target for _, _, target in entries]
    twice = next((t for t in targets if targets.count(t) > 1), None)
    if twice:
        raise ApiError(f'maps: target "{twice}" is mapped from more than one column')
    if join_type == "join_info" and join_key not in targets:
        raise ApiError(f'join_key: no column of the file map targets "{join_key}"')
    return FileMapRequest(delimiters, dialect, entries, ignore_join, flags)


_NOT_NAME_CHARACTER = re.compile(r"[^a-z0-9_]")


def header_clean(name: str) -> str:
    """``clean_file_headers``: a UTF-8 byte order mark and surrounding whitespace go; under
    reading B of the point the name is also normalised (lowercase, ``_`` for every other
    character than a-z, 0-9 and ``_``)."""
    cleaned = name.lstrip("\ufeff").strip()
    if switches.reading_b("clean_file_headers"):
        cleaned = _NOT_NAME_CHARACTER.sub("_", cleaned.lower())
    return cleaned


def positions_of(
    *, entries: list[tuple[str, str, str]], header: list[str], name_based: bool, clean: bool
) -> dict[str, int]:
    """``{target: column index}``; ApiError naming the first key whose column the header
    lacks. With names, a name given twice in the header means its first column."""
    names = [header_clean(h) if clean else h for h in header]
    first: dict[str, int] = {}
    for index, name in enumerate(names):
        first.setdefault(name, index)
    positions = {}
    for key, source, target in entries:
        column = first.get(source) if name_based else int(source)
        if column is None or column >= len(header):
            raise ApiError(f'maps: column "{source}" (key "{key}") is not in the file\'s header')
        positions[target] = column
    return positions


def stored_map(request: FileMapRequest) -> dict:
    """What the import keeps: sources decoded (names, or positions as decimal text), and the
    keys as sent (read back under reading B of ``file_map_keys``)."""
    return {
        "maps": {source: target for _, source, target in request.entries},
        "sent_maps": {key: target for key, _, target in request.entries},
        "ignore_join": request.ignore_join,
        **request.flags,
    }


def maps_read_back(file_map: dict) -> dict:
    """The maps as answered: keyed by decoded source names (reading A of
    ``file_map_keys``) or by the keys as sent, hex when encoded (reading B)."""
    if switches.reading_b("file_map_keys"):
        return file_map.get("sent_maps", file_map["maps"])
    return file_map["maps"]


def file_map_answer(*, delimiters: dict, file_map: dict) -> dict:
    """The contract's answer: ``file_map`` is text (our choice: JSON) of the delimiters, the
    maps (``maps_read_back``), and ``ignore_join``."""
    text = {
        "encoding": delimiters["encoding"],
        "separator": delimiters["separator"],
        "enclosure": delimiters["enclosure"],
        "escaper": delimiters["escaper"],
        "maps": maps_read_back(file_map),
        "ignore_join": file_map["ignore_join"],
    }
    return {
        "file_map": json.dumps(text, ensure_ascii=False),
        "name_based_maps": file_map["name_based_maps"],
        "clean_file_headers": file_map["clean_file_headers"],
    }
