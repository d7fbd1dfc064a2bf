"""The Export object's settings: defaults, the closed lists, validation of a free-form
request body, and the answer (every value a string, as the contract says).

A PUT merges the given settings into the stored ones; keys the export does not take
(``sortable_fields``, ``tags``, ``validate_custom_input``, read-only fields, anything else)
are ignored. A value outside its closed list, or of the wrong kind, is a 400 whose
message starts with the field's name.
"""

import codecs
import re
from decimal import Decimal, InvalidOperation

from sandbox.api_php.errors import ApiError
from sandbox.exports.selector import SelectorError, selector_parse

DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|", "semicolon": ";"}
ENCODINGS = {
    "UTF-8": "utf-8",
    "UTF-16": "utf-16",
    "ISO-8859-1": "latin-1",
    "Windows-1252": "cp1252",
}
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


def _scalar(key: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ApiError(f"{key}: must be a string")
    return str(value)


def _flag(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if value in (0, 1, "0", "1"):
        return str(value)
    raise ApiError(f"{key}: must be 0 or 1")


def _number(key: str, value: object) -> str:
    low, high, decimals = NUMBERS[key]
    text = _scalar(key, value).strip()
    try:
        number = Decimal(text)
    except InvalidOperation:
        number = None
    if number is None or not number.is_finite() or (not decimals and number != int(number)):
        raise ApiError(f"{key}: must be a {'number' if decimals else 'whole number'}")
    if number < low or (high is not None and number > high):
        raise ApiError(f"{key}: must be from {low} to {high if high is not None else 'any'}")
    return text


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


def settings_merge(current: dict, body: dict, *, db_fields: list[str]) -> dict:
    """The stored settings after applying ``body``; ApiError on any bad value."""
    merged = {**DEFAULTS, **current}
    for key, value in body.items():
        if key in ENUMS:
            text = _scalar(key, value)
            if text not in ENUMS[key]:
                allowed = ", ".join(repr(v) for v in ENUMS[key])
                raise ApiError(f"{key}: unknown value {text!r}; one of {allowed}")
            merged[key] = text
        elif key in FLAGS:
            merged[key] = _flag(key, value)
        elif key in TEXTS:
            merged[key] = _scalar(key, value)
        elif key in NUMBERS:
            merged[key] = _number(key, value)
        elif key in CHARACTERS:
            text = _scalar(key, value)
            if len(text) > 1:
                raise ApiError(f"{key}: must be one character or empty")
            merged[key] = text
        elif key == "row_sort":
            text = _scalar(key, value)
            if text and text not in db_fields:
                raise ApiError(f"row_sort: unknown field {text!r}")
            merged[key] = text
        elif key == "export_selector":
            text = _scalar(key, value)
            try:
                selector_parse(text, db_fields)
            except SelectorError as exc:
                raise ApiError(f"export_selector: {exc}") from exc
            merged[key] = text
        elif key == "strip_characters":
            merged[key] = _strip_characters(value)
        elif key == "deduplicate_field_name":
            merged[key] = _dedupe(value, db_fields)
        elif key == "protocol_info":
            if not isinstance(value, list):
                raise ApiError("protocol_info: must be an array")
            merged[key] = value
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
