"""Reading a delivered feed file as a stream of validated rows.

The file is never read whole: the (decompressed) byte stream goes through a text wrapper
into ``csv.reader``, one record at a time. ``feed_records`` raises ``FeedMalformed`` for
a file that is unusable as a whole (not the configured compression, truncated, not
UTF-8, not CSV, required columns missing); ``row_validate`` turns one record into the
listing's values or a reason to reject that row alone.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import IO, TYPE_CHECKING
from urllib.parse import urlsplit

from marketplace.catalog.mapping import LISTING_COLUMNS, REQUIRED_COLUMNS

if TYPE_CHECKING:
    from _csv import Reader  # what csv.reader returns

DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|", "semicolon": ";"}
CONDITIONS = frozenset({"new", "used", "refurbished"})
MAX_LENGTHS = {
    "sku": 128,
    "title": 300,
    "description": 10_000,
    "brand": 200,
    "product_type": 300,
    "image_link": 1000,
    "link": 1000,
}
# Feeds may be large; a single field of a sane product never is.
csv.field_size_limit(1_000_000)

_PRICE = re.compile(r"^(-?\d{1,10})(?:\.(\d{1,2}))?(?:\s+[A-Za-z]{3})?$")


class FeedMalformed(Exception):
    """The file as a whole cannot be ingested; nothing of it is applied."""


@dataclass(frozen=True, slots=True)
class Record:
    line: int  # line number in the file where the record ends (the header is line 1)
    values: dict[str, str]


def _open_bytes(raw: IO[bytes], compression: str) -> IO[bytes] | gzip.GzipFile:
    if compression == "gzip":
        if raw.read(2) != b"\x1f\x8b":
            raise FeedMalformed("the file is not gzip-compressed, as the feed is configured")
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "zip":
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
def feed_records(raw: IO[bytes], *, compression: str, delimiter: str) -> Iterator[Iterator[Record]]:
    """Yields an iterator of the file's records (header checked) with errors mapped."""
    try:
        stream = _open_bytes(raw, compression)
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="strict", newline="")
        reader = csv.reader(
            text, delimiter=DELIMITERS.get(delimiter, ","), quotechar='"', strict=True
        )
        yield _records(reader)
    except FeedMalformed:
        raise
    except (EOFError, gzip.BadGzipFile, zlib.error, zipfile.BadZipFile) as exc:
        raise FeedMalformed(f"the compressed file is truncated or corrupt ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise FeedMalformed(f"the file is not UTF-8 text (byte {exc.start} of a chunk)") from exc
    except csv.Error as exc:
        raise FeedMalformed(f"the file is not valid CSV: {exc}") from exc


def _records(reader: Reader) -> Iterator[Record]:
    header_row = next(reader, None)
    if not header_row:
        raise FeedMalformed("the file is empty: no header row")
    header = [name.strip().lower() for name in header_row]
    if len(set(header)) != len(header):
        raise FeedMalformed("the header names a column twice")
    missing = REQUIRED_COLUMNS - set(header)
    if missing:
        raise FeedMalformed("the header lacks required column(s) " + ", ".join(sorted(missing)))
    known = [(index, name) for index, name in enumerate(header) if name in LISTING_COLUMNS]
    width = len(header)
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        line = reader.line_num
        if len(row) != width:
            yield Record(line=line, values={"__width__": str(len(row))})
            continue
        yield Record(line=line, values={name: row[index] for index, name in known})


def _gtin_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits[:-1])):
        total += int(char) * (3 if position % 2 == 0 else 1)
    return (10 - total % 10) % 10 == int(digits[-1])


def _price(raw: str, label: str) -> Decimal:
    match = _PRICE.match(raw)
    if not match:
        raise ValueError(f"{label} '{raw[:40]}' is not an amount with at most 2 decimals")
    value = Decimal(f"{match.group(1)}.{match.group(2) or '0'}")
    if value < 0:
        raise ValueError(f"{label} {raw} is negative")
    return value


def _url(raw: str, label: str) -> str:
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in raw):
        raise ValueError(f"{label} '{raw[:60]}' is not an http(s) URL")
    return raw


def row_validate(record: Record) -> dict[str, object] | str:
    """The listing's values from one record, or why the row is rejected."""
    values = record.values
    if "__width__" in values:
        return f"the row has {values['__width__']} fields, not as many as the header"
    sku = values.get("sku", "").strip()
    if not sku:
        return "sku is missing"
    for name, limit in MAX_LENGTHS.items():
        if len(values.get(name, "")) > limit:
            return f"{name} is longer than {limit} characters"
    try:
        price_raw = values.get("price", "").strip()
        if not price_raw:
            return "price is missing"
        price = _price(price_raw, "price")
        sale_raw = values.get("sale_price", "").strip()
        sale_price = _price(sale_raw, "sale_price") if sale_raw else None
        quantity_raw = values.get("quantity", "").strip()
        if not quantity_raw.lstrip("-").isdigit():
            return f"quantity '{quantity_raw[:20]}' is not a whole number"
        quantity = int(quantity_raw)
        if quantity < 0:
            return f"quantity {quantity} is negative"
        if quantity > 2_000_000_000:
            return f"quantity {quantity} is too large"
        image_link = _url(values.get("image_link", "").strip(), "image_link")
        link = _url(values.get("link", "").strip(), "link")
    except (ValueError, InvalidOperation) as exc:
        return str(exc)
    gtin = values.get("gtin", "").strip()
    if gtin and not (gtin.isdigit() and len(gtin) in (8, 12, 13, 14) and _gtin_ok(gtin)):
        return f"gtin '{gtin[:20]}' is not a valid GTIN-8/12/13/14"
    condition = values.get("condition", "").strip().lower()
    if condition and condition not in CONDITIONS:
        return f"condition '{condition[:20]}' is not new, used or refurbished"
    return {
        "sku": sku,
        "title": values.get("title", "").strip(),
        "description": values.get("description", ""),
        "brand": values.get("brand", "").strip(),
        "gtin": gtin,
        "price": price,
        "sale_price": sale_price,
        "quantity": quantity,
        "condition": condition,
        "product_type": values.get("product_type", "").strip(),
        "image_link": image_link,
        "link": link,
    }
