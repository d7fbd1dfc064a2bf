"""The Export object's settings: defaults, the closed lists, validation of a free-form
request body, and the answer (every value a string, as the contract says).

A PUT merges the given settings into the stored ones; keys the export does not take
(``sortable_fields``, ``tags``, ``validate_custom_input``, read-only fields, anything else)
are ignored. A value outside its closed list, or of the wrong kind, is a 400 whose
message starts with the field's name.
"""

import codecs
import re
from collections.abc import Callable
from decimal import Decimal

from sandbox.common.api_php.errors import ApiError
from sandbox.common.settings_merge import (
    DELIMITERS,
    ENCODINGS,
    SettingsShape,
    scalar,
)
from sandbox.common.settings_merge import settings_merge as common_settings_merge
from sandbox.platform_api.exports.selector import SelectorError, selector_parse

ENUMS: dict[str, tuple[str, ...]] = {
    "export_format": ("delimited", "json", "xml"),
    "delimiter": tuple(DELIMITERS),
    "compression": ("", "gzip", "zip"),
    "json_minify_type": ("", "none", "minify"),
    "row_order": ("ASC", "DESC"),
    # "" = write the file and keep it, deliver nowhere. ftp (optional in the contract) is not
    # offered by this sandbox.
    "protocol": ("", "http", "https"),
    "export_encoding": tuple(ENCODINGS),
    "destination": ("", "custom"),
}
FLAGS = (
    "include_column_names",
    "quoted_fields",
    "show_empty_tags",
    "show_empty_parent_tags",
    "xml_write_document_tag",
    "use_cdata",
)
TEXTS = (
    "name",
    "file_name",
    "host",
    "username",
    "password",
    "ftp_url",
    "file_header",
    "file_footer",
    "zip_inner_file_name",
    "export_index_field",
    "destination_region",
)
# name -> (minimum, maximum, decimals allowed)
NUMBERS: dict[str, tuple[Decimal, Decimal | None, bool]] = {
    "threshold": (Decimal(0), None, False),
    "row_limit": (Decimal(0), None, False),
    "max_attempts": (Decimal(1), Decimal(10), False),
    "time_between_attempts": (Decimal(0), Decimal(3600), True),
    "timeout": (Decimal("0.1"), Decimal(600), True),
}
CHARACTERS = ("enclosure", "escape")

DEFAULTS: dict[str, object] = {
    "name": "",
    "file_name": "",
    "protocol": "",
    "protocol_info": [],
    "host": "",
    "username": "",
    "password": "",
    "ftp_url": "",
    "export_selector": "true",
    "export_format": "delimited",
    "file_header": "",
    "file_footer": "",
    "threshold": "0",
    "include_column_names": "1",
    "json_minify_type": "none",
    "export_encoding": "UTF-8",
    "delimiter": "comma",
    "compression": "",
    "quoted_fields": "0",
    "deduplicate_field_name": [],
    "enclosure": '"',
    "escape": '"',
    "strip_characters": {},
    "show_empty_tags": "0",
    "show_empty_parent_tags": "0",
    "xml_write_document_tag": "1",
    "use_cdata": "0",
    "zip_inner_file_name": "",
    "max_attempts": "3",
    "time_between_attempts": "60",
    "timeout": "30",
    "row_limit": "0",
    "row_sort": "",
    "row_order": "ASC",
    "export_index_field": "",
    "destination": "",
    "destination_region": "",
}
XML_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]*$")


def strip_character(key: str, sequence: str) -> str:
    """The one character an escape sequence (``\\n``, ``\\t``, ``\\u00a0``…) or a literal names."""
    try:
        decoded = codecs.decode(sequence, "unicode_escape") if "\\" in sequence else sequence
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(f"strip_characters.{key}: not an escape sequence") from exc
    if len(decoded) != 1:
        raise ApiError(f"strip_characters.{key}: must name exactly one character")
    return decoded


def _strip_characters(value: object) -> dict[str, str]:
    if value == [] or value == "":
        return {}
    if not isinstance(value, dict):
        raise ApiError("strip_characters: must be an object with keys char1, char2, ...")
    out = {}
    for key, sequence in value.items():
        if not re.fullmatch(r"char[1-9][0-9]*", str(key)) or not isinstance(sequence, str):
            raise ApiError("strip_characters: keys char1, char2, ... with string values")
        strip_character(key, sequence)
        out[str(key)] = sequence
    return out


def _dedupe(value: object, fields: list[str]) -> list[str]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ApiError("deduplicate_field_name: must be a list of field names")
    names = [n for n in names if n]
    unknown = [n for n in names if n not in fields]
    if unknown:
        raise ApiError(f"deduplicate_field_name: unknown field {unknown[0]!r}")
    return names


SHAPE = SettingsShape(defaults=DEFAULTS, enums=ENUMS, flags=FLAGS, texts=TEXTS, numbers=NUMBERS)


def _character(key: str) -> Callable[[object], str]:
    def read(value: object) -> str:
        text = scalar(key, value)
        if len(text) > 1:
            raise ApiError(f"{key}: must be one character or empty")
        return text

    return read


def _protocol_info(value: object) -> list:
    if not isinstance(value, list):
        raise ApiError("protocol_info: must be an array")
    return value


def settings_merge(current: dict, body: dict, *, db_fields: list[str]) -> dict:
    """The stored settings after applying ``body``; ApiError on any bad value."""

    def row_sort(value: object) -> str:
        text = scalar("row_sort", value)
        if text and text not in db_fields:
            raise ApiError(f"row_sort: unknown field {text!r}")
        return text

    def export_selector(value: object) -> str:
        text = scalar("export_selector", value)
        try:
            selector_parse(text, db_fields)
        except SelectorError as exc:
            raise ApiError(f"export_selector: {exc}") from exc
        return text

    readers: dict[str, Callable[[object], object]] = {
        **{key: _character(key) for key in CHARACTERS},
        "row_sort": row_sort,
        "export_selector": export_selector,
        "strip_characters": _strip_characters,
        "deduplicate_field_name": lambda value: _dedupe(value, db_fields),
        "protocol_info": _protocol_info,
    }
    merged = common_settings_merge(current, body, shape=SHAPE, readers=readers)
    _check_whole(merged)
    return merged


def _check_whole(settings: dict) -> None:
    if not str(settings["name"]).strip():
        raise ApiError("name: required")
    file_name = settings["file_name"]
    if "/" in file_name or "\\" in file_name:
        raise ApiError("file_name: a name, not a path")
    if settings["protocol"] in ("http", "https"):
        host = settings["host"]
        if host and not host.startswith(settings["protocol"] + "://"):
            raise ApiError(f"host: must be a {settings['protocol']}:// URL of a folder")


def export_fields_parse(value: object, db_fields: list[str]) -> list[tuple[str, str, int]]:
    """``[(field_name, export_field_name, sort_order)]`` from an array of
    ``{field_name, export_field_name[, sort_order]}`` or a ``{field1: {...}}`` object."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: int(k[5:]) if re.fullmatch(r"field\d+", k) else -1)
        if any(not re.fullmatch(r"field\d+", k) for k in keys):
            raise ApiError("export_fields: object keys must be field1, field2, ...")
        items = [(k, value[k]) for k in keys]
    elif isinstance(value, list):
        items = [(f"[{i}]", item) for i, item in enumerate(value)]
    else:
        raise ApiError("export_fields: must be an array or an object of field1, field2, ...")
    parsed = []
    for position, (where, item) in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ApiError(f"export_fields{where}: must be an object")
        source = item.get("field_name", "")
        name = item.get("export_field_name")
        if not isinstance(source, str) or (source and source not in db_fields):
            raise ApiError(f"export_fields{where}.field_name: unknown field {source!r}")
        if not isinstance(name, str) or not name:
            raise ApiError(f"export_fields{where}.export_field_name: required")
        order = item.get("sort_order", position)
        if isinstance(order, bool) or not str(order).lstrip("-").isdigit():
            raise ApiError(f"export_fields{where}.sort_order: must be a whole number")
        parsed.append((source, name, int(order)))
    names = [name for _, name, _ in parsed]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ApiError(f"export_fields: export_field_name {duplicate!r} given twice")
    return parsed


def xml_names_check(settings: dict, names: list[str]) -> None:
    if settings["export_format"] != "xml":
        return
    for name in names:
        if not all(XML_NAME.match(part) for part in name.split("/")):
            raise ApiError(f"export_fields: {name!r} is not an XML element name (parts by /)")
