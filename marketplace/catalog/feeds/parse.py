"""Reading a delivered feed file as a stream of validated rows.

The file is never read whole: the (decompressed) byte stream goes through a text wrapper
into ``csv.reader``, one record at a time. ``feed_rows`` raises ``FeedMalformed`` for a
file that is unusable as a whole (not the configured compression, truncated, not UTF-8,
not CSV, required columns missing); its ``RowCheck`` (made once for the header) turns
one row into the listing's values or a reason to reject that row alone (a harmful
character, by the feed's rule in ``marketplace.text_rules``, rejects its row with line,
field and character; odd spacing in a single-line field becomes one space, counted).
These are the feed's only row rules: every ingest path uses them.

The FEED_MAX_* limits are checked while reading, never after: decompressed bytes are
counted as they are read, each line is refused past FEED_MAX_LINE_BYTES before csv holds
it (csv reads a whole record before its width can be checked), and blank lines count
toward FEED_MAX_ROWS. ``FeedTooLarge`` fails the run like any malformed file.
"""

from __future__ import annotations

import csv
import gzip
import io
import operator
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings

from marketplace.catalog.feeds.mapping import LISTING_COLUMNS, REQUIRED_COLUMNS
from marketplace.text_rules import (
    FEED_HARMFUL_SEARCH,
    FEED_SINGLE_SUSPECT,
    feed_harmful,
    feed_spacing_fix,
)

if TYPE_CHECKING:
    from _csv import Reader  # what csv.reader returns

DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|", "semicolon": ";"}
CONDITIONS = frozenset({"new", "used", "refurbished"})
# (RowCheck spells these out in its fast test too.)
MAX_LENGTHS = {
    "sku": 128,
    "title": 300,
    "description": 10_000,
    "brand": 200,
    "product_type": 300,
    "image_link": 1000,
    "link": 1000,
}
# Free text that may hold lines (tab, line feed, carriage return) and any spacing; in the
# rest, odd spacing becomes one space (marketplace.text_rules).
MULTILINE_FIELDS = frozenset({"description"})

_PRICE = re.compile(r"^(-?\d{1,10})(?:\.(\d{1,2}))?(?:\s+[A-Za-z]{3})?$")
# An http(s) URL urlsplit would take as it stands (lower-case scheme, a host, printable
# ASCII after it); anything else is decided by urlsplit itself.
_PLAIN_URL = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::[0-9]{1,5})?(?:[/?#][!-~]*)?$")
_plain_url = _PLAIN_URL.match
_feed_suspect = FEED_SINGLE_SUSPECT.search
_harmful_search = FEED_HARMFUL_SEARCH.search
# Corrected fields a run keeps for its page (as many as its rejections).
CORRECTIONS_KEPT = 200


class FeedMalformed(Exception):
    """The file as a whole cannot be ingested; nothing of it is applied."""


class FeedTooLarge(FeedMalformed):
    """A limit was reached while reading (FEED_MAX_*): the run fails, nothing applied."""


class _CountedBytes(io.RawIOBase):
    """The decompressed bytes, refused past FEED_MAX_DECOMPRESSED_BYTES while reading."""

    def __init__(self, inner: IO[bytes] | gzip.GzipFile, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        self.count += len(data)
        if self.count > self.limit:
            raise FeedTooLarge(
                f"the file is larger than {self.limit} bytes once decompressed "
                "(FEED_MAX_DECOMPRESSED_BYTES)"
            )
        buffer[: len(data)] = data
        return len(data)


class _CappedLines:
    """The text's lines for csv, each refused past FEED_MAX_LINE_BYTES before csv holds it,
    and the record being read (a quoted field may span lines) likewise."""

    def __init__(self, text: io.TextIOWrapper, limit: int) -> None:
        self.text = text
        self.limit = limit
        self.record_chars = 0

    def __iter__(self) -> _CappedLines:
        return self

    def __next__(self) -> str:
        line = self.text.readline(self.limit + 1)
        if not line:
            raise StopIteration
        chars = len(line)
        self.record_chars += chars
        if (
            chars > self.limit
            or self.record_chars > self.limit
            # A character is at most 4 bytes in UTF-8: encode only a line that could be over.
            or (chars * 4 > self.limit and len(line.encode("utf-8", "surrogatepass")) > self.limit)
        ):
            raise FeedTooLarge(
                f"a line or record is longer than {self.limit} bytes (FEED_MAX_LINE_BYTES)"
            )
        return line


def _zip_entries(raw: IO[bytes]) -> int:
    """How many entries the archive's end record declares, read without its directory
    (zipfile would read every entry of the central directory into memory first)."""
    raw.seek(0, io.SEEK_END)
    size = raw.tell()
    tail_size = min(size, 22 + 65_535)
    raw.seek(size - tail_size)
    tail = raw.read(tail_size)
    raw.seek(0)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise FeedMalformed("the file is not a zip archive, as the feed is configured")
    entries, directory_bytes = struct.unpack("<HI", tail[at + 10 : at + 16])
    # The directory's size too: zipfile reads it by size, whatever the count claims. An
    # entry takes 46 bytes and its name; a feed's names are short. (0xFFFF entries: a
    # ZIP64 archive, whose count is elsewhere; more than any feed needs anyway.)
    if directory_bytes > 1024 * max(entries, 1):
        raise FeedTooLarge(
            f"the zip archive's directory is {directory_bytes} bytes for {entries} entries"
        )
    return int(entries)


def _open_bytes(raw: IO[bytes], compression: str) -> IO[bytes] | gzip.GzipFile:
    if compression == "gzip":
        if raw.read(2) != b"\x1f\x8b":
            raise FeedMalformed("the file is not gzip-compressed, as the feed is configured")
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "zip":
        entries = _zip_entries(raw)
        if entries > settings.FEED_ZIP_MAX_ENTRIES:
            raise FeedTooLarge(
                f"the zip archive has {entries} entries, more than "
                f"{settings.FEED_ZIP_MAX_ENTRIES} (FEED_ZIP_MAX_ENTRIES)"
            )
        try:
            archive = zipfile.ZipFile(raw)
        except zipfile.BadZipFile as exc:
            raise FeedMalformed("the file is not a zip archive, as the feed is configured") from exc
        members = [info for info in archive.infolist() if not info.is_dir()]
        if not members:
            raise FeedMalformed("the zip archive holds no file")
        return archive.open(members[0])
    return raw


@contextmanager
def feed_rows(raw: IO[bytes], *, compression: str, delimiter: str) -> Iterator[FeedRows]:
    """Yields the file's rows (header checked) with the check made for its header; reading
    errors are mapped to ``FeedMalformed``."""
    try:
        stream = _CountedBytes(_open_bytes(raw, compression), settings.FEED_MAX_DECOMPRESSED_BYTES)
        text = io.TextIOWrapper(
            io.BufferedReader(stream, buffer_size=256 * 1024),
            encoding="utf-8-sig",
            errors="strict",
            newline="",
        )
        lines = _CappedLines(text, settings.FEED_MAX_LINE_BYTES)
        # Per field too (a process-wide setting of the csv module; this is its only reader).
        csv.field_size_limit(settings.FEED_MAX_LINE_BYTES)
        reader = csv.reader(
            lines, delimiter=DELIMITERS.get(delimiter, ","), quotechar='"', strict=True
        )
        check = _header_read(reader, lines)
        yield FeedRows(check=check, rows=_rows(reader, lines))
    except FeedMalformed:
        raise
    except (EOFError, gzip.BadGzipFile, zlib.error, zipfile.BadZipFile) as exc:
        raise FeedMalformed(f"the compressed file is truncated or corrupt ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise FeedMalformed(f"the file is not UTF-8 text (byte {exc.start} of a chunk)") from exc
    except csv.Error as exc:
        raise FeedMalformed(f"the file is not valid CSV: {exc}") from exc


@dataclass(frozen=True, slots=True)
class FeedRows:
    check: RowCheck
    rows: Iterator[tuple[int, list[str]]]  # (line where the record starts, its fields)


def _header_read(reader: Reader, lines: _CappedLines) -> RowCheck:
    max_fields = settings.FEED_MAX_FIELDS
    header_row = next(reader, None)
    lines.record_chars = 0
    if not header_row:
        raise FeedMalformed("the file is empty: no header row")
    if len(header_row) > max_fields:
        raise FeedTooLarge(
            f"the header has {len(header_row)} fields, more than {max_fields} (FEED_MAX_FIELDS)"
        )
    header = [name.strip().lower() for name in header_row]
    if len(set(header)) != len(header):
        raise FeedMalformed("the header names a column twice")
    missing = REQUIRED_COLUMNS - set(header)
    if missing:
        raise FeedMalformed("the header lacks required column(s) " + ", ".join(sorted(missing)))
    return RowCheck(header)


def _rows(reader: Reader, lines: _CappedLines) -> Iterator[tuple[int, list[str]]]:
    max_fields = settings.FEED_MAX_FIELDS
    max_rows = settings.FEED_MAX_ROWS
    read = 0
    # The line a record starts on (a quoted field may hold line breaks: the seller looks
    # for the row where it begins).
    start = reader.line_num + 1
    for row in reader:
        line, start = start, reader.line_num + 1
        lines.record_chars = 0
        # Blank lines count: a flood of newlines is refused as fast as a flood of rows.
        read += 1
        if read > max_rows:
            raise FeedTooLarge(
                f"the file has more than {max_rows} rows, blank lines included (FEED_MAX_ROWS)"
            )
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) > max_fields:
            raise FeedTooLarge(
                f"line {line} has {len(row)} fields, more than {max_fields} (FEED_MAX_FIELDS)"
            )
        yield line, row


def _gtin_ok(digits: str) -> bool:
    # From the right, before the check digit: weights 3, 1, 3, 1, …
    if digits.isascii():  # summing the bytes ("0" is 48) runs in C: ~5x faster
        threes, ones = digits[-2::-2].encode(), digits[-3::-2].encode()
        total = 3 * (sum(threes) - 48 * len(threes)) + sum(ones) - 48 * len(ones)
    else:  # other scripts' digits, as int() reads them
        total = 3 * sum(map(int, digits[-2::-2])) + sum(map(int, digits[-3::-2]))
    return (10 - total % 10) % 10 == int(digits[-1])


# Amounts already read (a feed repeats few distinct prices): raw text -> database text.
_PRICES: dict[str, str] = {}
_PRICES_KEPT = 50_000


def _price(raw: str, label: str) -> str:
    """The amount as text for the database ("12.5"), or ValueError with the reason."""
    known = _PRICES.get(raw)
    if known is not None:
        return known
    amount = _price_read(raw, label)
    if len(_PRICES) >= _PRICES_KEPT:
        _PRICES.clear()
    _PRICES[raw] = amount
    return amount


def _price_read(raw: str, label: str) -> str:
    match = _PRICE.match(raw)
    if not match:
        raise ValueError(f"{label} '{raw[:40]}' is not an amount with at most 2 decimals")
    units, cents = match.group(1), match.group(2) or "0"
    if units[0] == "-" and (units.strip("-0") or cents.strip("0")):
        raise ValueError(f"{label} {raw} is negative")
    if not (units.isascii() and cents.isascii()):  # other scripts' digits, as Decimal reads them
        return str(Decimal(f"{units}.{cents}").copy_abs())
    return f"{units.lstrip('-')}.{cents}"


def _url(raw: str, label: str) -> str:
    if not raw or _PLAIN_URL.match(raw):
        return raw  # the common case, decided without urlsplit (same outcome, far faster)
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in raw):
        raise ValueError(f"{label} '{raw[:60]}' is not an http(s) URL")
    return raw


class RowCheck:
    """The rules of one feed row, made once for the file's header (``check(line, row)``).

    Returns the listing's values in ``LISTING_COLUMNS`` order, as the database takes them
    (price and sale price as decimal text, quantity as int), then the record id (the SKU
    as the file holds it, "" when the same as the trimmed SKU), or why the row is rejected:
    a harmful character (the feed's rule, with line and field), a wrong width, a
    missing or over-long value, a bad amount, quantity, GTIN, condition or link."""

    def __init__(self, header: list[str]) -> None:
        self.width = len(header)
        position = {name: index for index, name in enumerate(header) if name in LISTING_COLUMNS}
        self.sku_index = position["sku"]
        # A column the header lacks reads as "" (an extra last field, see __call__).
        self._pick = operator.itemgetter(
            *(position.get(name, self.width) for name in LISTING_COLUMNS)
        )
        # The fields checked for characters, in header order (the first bad one is named).
        self._known = sorted((index, name) for name, index in position.items())
        self._single = operator.itemgetter(
            *(index for index, name in self._known if name not in MULTILINE_FIELDS), self.width
        )
        self._multi = [index for index, name in self._known if name in MULTILINE_FIELDS]
        self._known_single = [(i, name) for i, name in self._known if name not in MULTILINE_FIELDS]
        # Single-line fields whose odd spacing was made one space: how many, and the first
        # CORRECTIONS_KEPT ({"line", "field", "found"}) for the run's page.
        self.corrected = 0
        self.corrections: list[dict[str, Any]] = []

    def ids_of(self, row: list[str]) -> tuple[str, str]:
        """A rejected row's SKU (to name it; "" when unreadable or itself refused) and its
        record id as the file holds it ("" when the same as the SKU)."""
        raw = row[self.sku_index][:128] if self.sku_index < len(row) else ""
        if feed_harmful(raw) is not None:
            return "", ""
        sku = feed_spacing_fix(raw)[0].strip() if _feed_suspect(raw) else raw.strip()
        return sku, ("" if raw == sku else raw)

    def sku_of(self, row: list[str]) -> str:
        return self.ids_of(row)[0]

    def _characters(self, line: int, row: list[str]) -> str | None:
        """The row's characters, looked at closely (the fast test found something): the
        first harmful one refuses the row, naming it; odd spacing in a single-line field
        becomes one space, noted."""
        for index, name in self._known:
            bad = feed_harmful(row[index])
            if bad is not None:
                return (
                    f"line {line}, field {name}: character U+{ord(bad):04X} is refused "
                    "(a control character or a bidi override)"
                )
        for index, name in self._known_single:
            value = row[index]
            if _feed_suspect(value) is not None:
                fixed, found = feed_spacing_fix(value)
                if found:
                    row[index] = fixed
                    self.corrected += 1
                    if len(self.corrections) < CORRECTIONS_KEPT:
                        self.corrections.append({"line": line, "field": name, "found": found})
        return None

    def __call__(self, line: int, row: list[str]) -> tuple[Any, ...] | str:
        if len(row) != self.width:
            return f"line {line}: the row has {len(row)} fields, not as many as the header"
        row.append("")
        raw_sku = row[self.sku_index]
        # The fast test: one search over the single-line text (rarely anything), and the
        # multi-line fields for what refuses only; the close look only when it found some.
        if _feed_suspect("".join(self._single(row))) is not None or any(
            _harmful_search(row[index]) is not None for index in self._multi
        ):
            refused = self._characters(line, row)
            if refused is not None:
                return refused
        (
            sku,
            title,
            description,
            brand,
            gtin,
            price_raw,
            sale_raw,
            quantity_raw,
            condition,
            product_type,
            image_link,
            link,
        ) = self._pick(row)
        sku = sku.strip()
        if not sku:
            return "sku is missing"
        if (
            len(sku) > 128
            or len(title) > 300
            or len(description) > 10_000
            or len(brand) > 200
            or len(product_type) > 300
            or len(image_link) > 1000
            or len(link) > 1000
        ):
            values = {"sku": sku, "title": title, "description": description, "brand": brand}
            values.update(product_type=product_type, image_link=image_link, link=link)
            for name, limit in MAX_LENGTHS.items():
                if len(values[name]) > limit:
                    return f"{name} is longer than {limit} characters"
        try:
            price_raw = price_raw.strip()
            if not price_raw:
                return "price is missing"
            price = _price(price_raw, "price")
            sale_raw = sale_raw.strip()
            sale_price = _price(sale_raw, "sale_price") if sale_raw else None
            quantity_raw = quantity_raw.strip()
            if not quantity_raw.lstrip("-").isdigit():
                return f"quantity '{quantity_raw[:20]}' is not a whole number"
            quantity = int(quantity_raw)
            if quantity < 0:
                return f"quantity {quantity} is negative"
            if quantity > 2_000_000_000:
                return f"quantity {quantity} is too large"
            image_link = image_link.strip()
            if image_link and not _plain_url(image_link):
                image_link = _url(image_link, "image_link")
            link = link.strip()
            if link and not _plain_url(link):
                link = _url(link, "link")
        except ValueError as exc:
            return str(exc)
        gtin = gtin.strip()
        if gtin and not (gtin.isdigit() and len(gtin) in (8, 12, 13, 14) and _gtin_ok(gtin)):
            return f"gtin '{gtin[:20]}' is not a valid GTIN-8/12/13/14"
        condition = condition.strip().lower()
        if condition and condition not in CONDITIONS:
            return f"condition '{condition[:20]}' is not new, used or refurbished"
        return (
            sku,
            title.strip(),
            description,
            brand.strip(),
            gtin,
            price,
            sale_price,
            quantity,
            condition,
            product_type.strip(),
            image_link,
            link,
            "" if raw_sku == sku else raw_sku,
        )
