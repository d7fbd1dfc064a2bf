"""The listing-status file: for every SKU of a seller, what the marketplace made of it.

The platform's join import reads it (over HTTP Basic, per-seller credentials) and adds its
columns to the seller's rows, so the seller sees in their own tool whether each product is
live, its listing id and URL, and why it was rejected. UTF-8, comma-separated, ``"``
enclosure doubled inside values (RFC 4180), header exactly as ``COLUMNS`` (its names carry
spaces and accents: the import's file map sends them hex-encoded).

The SKU column holds the seller's id exactly as their database holds it (the feed's raw
value, ``Listing.record_id``), so the import joins it to that product; the time column is
the status's (``Listing.status_at`` or the rejection's), the one EDRTS sends too.

Rows come from two streamed queries (listings with their rejection, if any, then rejected
SKUs that have no listing), so memory and the number of queries stay flat whatever the
catalog's size.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Exists, OuterRef, Subquery

from marketplace.catalog.feeds.provision import feed_password_hash
from marketplace.catalog.models import Listing, RejectedSku

# (role, header): the role names the target field staff may adjust (``StatusImport.targets``).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("sku", "SKU"),
    ("listing_id", "Marketplace listing id"),
    ("status", "Statut de l'annonce"),
    ("reason", "Raison du refus"),
    ("listing_url", "Lien de l'annonce"),
    ("updated_at", "Dernière mise à jour"),
)
HEADER = tuple(header for _, header in COLUMNS)
# The seller's fields the status columns fill by default; the SKU column joins on the
# field that feeds the feed's SKU instead (the import's join key).
DEFAULT_TARGETS: dict[str, str] = {
    "listing_id": "mp_listing_id",
    "status": "mp_status",
    "reason": "mp_reason",
    "listing_url": "mp_listing_url",
    "updated_at": "mp_updated_at",
}
LIVE, INACTIVE, REJECTED = "live", "inactive", "rejected"
CHUNK = 2000
BUFFER = 64 * 1024


# The status file's password is generated like the feed's (32 random bytes): one hash.
status_password_hash = feed_password_hash


def listing_url(listing_id: int) -> str:
    return settings.LISTING_URL_TEMPLATE.format(listing_id=listing_id)


def _iso(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_rows(*, seller_id: int) -> Iterator[tuple[str, ...]]:
    """Every SKU of the seller as a row of ``HEADER``, ordered by SKU within each part."""
    rejection = RejectedSku.objects.filter(seller_id=seller_id, sku=OuterRef("sku"))
    listings = (
        Listing.objects.filter(seller_id=seller_id)
        .annotate(
            rejected_reason=Subquery(rejection.values("reason")[:1]),
            rejected_at=Subquery(rejection.values("updated_at")[:1]),
            rejected_id=Subquery(rejection.values("record_id")[:1]),
        )
        .order_by("sku")
        .values_list(
            "pk",
            "sku",
            "record_id",
            "active",
            "status_at",
            "updated_at",
            "rejected_reason",
            "rejected_at",
            "rejected_id",
        )
    )
    rows = listings.iterator(chunk_size=CHUNK)
    for pk, sku, record_id, active, status_at, updated_at, reason, rejected_at, rejected_id in rows:
        # The same choices as the status triggers (status_outbox._RECORD): one source.
        if reason is not None:
            status, when = REJECTED, rejected_at
        else:
            # (A listing written outside the feed, e.g. by the ORM, may have no status time.)
            status, when = (LIVE if active else INACTIVE), status_at or updated_at
        shown = rejected_id or record_id or sku
        yield (shown, str(pk), status, reason or "", listing_url(pk), _iso(when))
    without_listing = (
        RejectedSku.objects.filter(seller_id=seller_id)
        .exclude(Exists(Listing.objects.filter(seller_id=seller_id, sku=OuterRef("sku"))))
        .order_by("sku")
        .values_list("sku", "record_id", "reason", "updated_at")
    )
    for sku, record_id, reason, rejected_at in without_listing.iterator(chunk_size=CHUNK):
        yield (record_id or sku, "", REJECTED, reason, "", _iso(rejected_at))


class _Echo:
    """A file-like object whose ``write`` hands the line back (Django's streaming CSV
    recipe): the csv writer formats, the response streams."""

    def write(self, value: str) -> str:
        return value


def status_csv_chunks(*, seller_id: int) -> Iterator[bytes]:
    """The file as UTF-8 chunks of about ``BUFFER`` bytes (one write per row would make
    100k tiny socket writes)."""
    writer = csv.writer(_Echo(), delimiter=",", quotechar='"', doublequote=True)
    buffer = [writer.writerow(HEADER)]
    size = 0
    for row in status_rows(seller_id=seller_id):
        line = writer.writerow(row)
        buffer.append(line)
        size += len(line)
        if size >= BUFFER:
            yield "".join(buffer).encode("utf-8")
            buffer, size = [], 0
    yield "".join(buffer).encode("utf-8")
