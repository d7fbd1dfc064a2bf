"""An import's create/update settings and its delimiters: defaults, closed lists, checks.

Create and update (``POST``) merge the given settings into the stored ones; keys the import
does not take are ignored (as for exports). A value outside its closed list, or of the
wrong kind, is a 400 whose message starts with the field's name. Numbers take the exports'
ranges (``max_attempts`` 1-10, ``time_between_attempts`` 0-3600 s, ``timeout`` 0.1-600 s).
"""

import csv
from dataclasses import dataclass
from decimal import Decimal

from sandbox.common.api_php.errors import ApiError
from sandbox.common.settings_merge import (
    DELIMITERS,
    ENCODINGS,
    Bounds,
    SettingsShape,
    scalar,
)
from sandbox.common.settings_merge import settings_merge as common_settings_merge

ENUMS: dict[str, tuple[str, ...]] = {
    # join_info adds columns to existing rows; product_feed creates rows (issue 13).
    "join_type": ("join_info", "product_feed"),
    # The contract names ftp and local too; this sandbox fetches over HTTP only.
    "file_location": ("url",),
}
TEXTS = ("name", "file_name", "url", "username", "password", "join_key")
NUMBERS: dict[str, Bounds] = {
    "max_attempts": (Decimal(1), Decimal(10), False),
    "time_between_attempts": (Decimal(0), Decimal(3600), True),
    "timeout": (Decimal("0.1"), Decimal(600), True),
}
DEFAULTS: dict[str, object] = {
    "name": "",
    "join_type": "",
    "file_location": "url",
    "file_name": "",
    "url": "",
    "username": "",
    "password": "",
    "join_key": "",
    "timeout": "30",
    "max_attempts": "3",
    "time_between_attempts": "60",
    "tags": [],
}
FILE_TYPES = ("delimited",)
SHAPE = SettingsShape(defaults=DEFAULTS, enums=ENUMS, texts=TEXTS, numbers=NUMBERS)
DELIMITER_FIELDS = ("encoding", "separator", "enclosure", "escaper", "file_type")


def _tags(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ApiError("tags: must be an array of strings")
    return value


def settings_merge(current: dict, body: dict, *, db_fields: list[str]) -> dict:
    """The stored settings after applying ``body``; ApiError on any bad value."""
    merged = common_settings_merge(current, body, shape=SHAPE, readers={"tags": _tags})
    _check_whole(merged, db_fields)
    return merged


def _check_whole(settings: dict, db_fields: list[str]) -> None:
    if not str(settings["name"]).strip():
        raise ApiError("name: required")
    if not settings["join_type"]:
        raise ApiError("join_type: required; one of 'join_info', 'product_feed'")
    if not settings["url"].startswith(("http://", "https://")):
        raise ApiError("url: required, the file's full http:// or https:// URL")
    join_key = settings["join_key"]
    if settings["join_type"] == "join_info" and not join_key:
        raise ApiError("join_key: required for a join_info import (the field rows match on)")
    if join_key and join_key not in db_fields:
        raise ApiError(f"join_key: unknown field {join_key!r}; the database's fields: {db_fields}")


@dataclass(frozen=True)
class Dialect:
    """The delimiters resolved for the csv module (the stored texts stay as given)."""

    codec: str
    separator: str
    enclosure: str
    escaper: str

    def reader_options(self) -> dict:
        """Keyword arguments of ``csv.reader``: an escaper equal to the enclosure means
        doubled enclosures (RFC 4180); another character escapes the next one; none = none."""
        options: dict = {"delimiter": self.separator, "strict": False}
        if self.enclosure:
            options["quotechar"] = self.enclosure
            options["quoting"] = csv.QUOTE_MINIMAL
            options["doublequote"] = self.escaper == self.enclosure
        else:
            options["quoting"] = csv.QUOTE_NONE
            options["doublequote"] = False
        if self.escaper and self.escaper != self.enclosure:
            options["escapechar"] = self.escaper
        return options


def _one_char(key: str, value: object, *, allow_empty: bool) -> str:
    text = scalar(key, value)
    if len(text) > 1 or (not text and not allow_empty):
        raise ApiError(f"{key}: must be one character{' or empty' if allow_empty else ''}")
    return text


def _codec(value: object) -> str:
    text = scalar("encoding", value)
    if not text:
        return "utf-8"  # the interface: "may be empty"
    by_name = {name.lower(): codec for name, codec in ENCODINGS.items()}
    codec = by_name.get(text.lower())
    if codec is None:
        allowed = ", ".join(repr(n) for n in ENCODINGS)
        raise ApiError(f"encoding: unknown value {text!r}; one of {allowed} or empty")
    return codec


def dialect_of(values: dict) -> Dialect:
    """Check ``encoding``, ``separator``, ``enclosure``, ``escaper``, ``file_type`` (all
    required). The separator is one character or a name the exports use (``comma``,
    ``tab``, ``pipe``, ``semicolon``)."""
    for key in DELIMITER_FIELDS:
        if key not in values:
            raise ApiError(f"{key}: required")
    file_type = scalar("file_type", values["file_type"])
    if file_type not in FILE_TYPES:
        raise ApiError(f"file_type: unknown value {file_type!r}; one of 'delimited'")
    separator_text = scalar("separator", values["separator"])
    separator = DELIMITERS.get(separator_text, separator_text)
    if len(separator) != 1 or separator in "\r\n":
        raise ApiError(
            f"separator: {separator_text!r} is neither one character nor one of "
            f"{', '.join(repr(n) for n in DELIMITERS)}"
        )
    enclosure = _one_char("enclosure", values["enclosure"], allow_empty=True)
    escaper = _one_char("escaper", values["escaper"], allow_empty=True)
    if enclosure and enclosure == separator:
        raise ApiError("enclosure: must differ from the separator")
    if escaper and escaper == separator:
        raise ApiError("escaper: must differ from the separator")
    return Dialect(_codec(values["encoding"]), separator, enclosure, escaper)


def delimiters_stored(values: dict) -> dict:
    """The five delimiter texts as given (after checking them)."""
    dialect_of(values)
    return {key: scalar(key, values[key]) for key in DELIMITER_FIELDS}
