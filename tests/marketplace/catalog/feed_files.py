"""Building feed files for tests (and the benchmark): CSV text, gzip, zip."""

from __future__ import annotations

import csv
import gzip
import io
import zipfile
from collections.abc import Iterable

HEADER = (
    "sku",
    "title",
    "brand",
    "gtin",
    "price",
    "sale_price",
    "quantity",
    "condition",
    "image_link",
    "link",
)


def product_row(n: int, *, price: str | None = None, quantity: str | None = None) -> dict:
    return {
        "sku": f"SKU-{n:06d}",
        "title": f'Product {n}, "quoted" and, comma',
        "brand": "Acme",
        "gtin": "4006381333931",
        "price": price if price is not None else f"{10 + n % 90}.99",
        "sale_price": "",
        "quantity": quantity if quantity is not None else str(n % 50),
        "condition": "new",
        "image_link": f"https://img.example.com/{n}.jpg",
        "link": f"https://shop.example.com/p/{n}",
    }


def csv_bytes(rows: Iterable[dict], header: Iterable[str] = HEADER, delimiter: str = ",") -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(
        out,
        fieldnames=list(header),
        delimiter=delimiter,
        quoting=csv.QUOTE_ALL,
        extrasaction="ignore",
        lineterminator="\n",
    )
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue().encode()


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data)


def zipped(data: bytes, inner: str = "catalog.csv") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(inner, data)
    return out.getvalue()
