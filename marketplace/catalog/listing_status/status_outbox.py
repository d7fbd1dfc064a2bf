"""Recording listing-status changes in the outbox (``StatusChange``), in the database, and
whether EDRTS sends a seller's (the sender is ``edrts_sender.py``).

What the marketplace says about a SKU is a function of two rows (``status_file.py``):
its listing (live or inactive, its id and so its link) and its rejection, if any (the
reason). Triggers on both tables record a change whenever one of them changes what that
function gives: a listing created, a listing's ``active`` flipped, a rejection added,
its reason changed, or it removed, or the record id (the seller's own id) changed. Each
such statement appends one outbox row per SKU it touched, with the status as it now is,
in the statement's own transaction: whatever code applies a feed (an ORM upsert, a
``COPY`` + one set-based merge), no change is missed and none is recorded for a
transaction that rolls back. An unchanged re-ingest (same rows, same reasons) records
nothing: ``updated_at`` and ``last_run_id`` alone are not a change.
The time recorded is the status file's (``Listing.status_at``, the
rejection's ``updated_at``), which moves only with such a change: one source for both.

Postgres: statement-level ``AFTER`` triggers with transition tables (one trigger per
event: transition tables cannot span events), each one ``INSERT … SELECT``. SQLite
(development): the same ``INSERT … SELECT`` in row-level triggers.

The migration ``0009_status_outbox`` installs them through ``triggers_install``; a later
change of this SQL needs a new migration calling it again (the functions are replaced):
``0010_status_outbox_listed`` does, for the listing triggers reading the changed rows
from their transition table, and ``0011_record_id_status_at`` for the record id and
``status_at``.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from marketplace.catalog.models import CatalogSource, StatusImport, StatusSync

LISTING = "catalog_listing"
REJECTED = "catalog_rejectedsku"
OUTBOX = "catalog_statuschange"

# One outbox row per (seller, sku) of ``{changed}``, with the status as the status file
# would show it now (status_file.status_rows): a rejection wins; else live or inactive;
# "" when the SKU is neither listed nor rejected any more.
_RECORD = """
INSERT INTO {outbox}
    (seller_id, sku, record_id, listing_id, status, reason, status_at, created_at)
SELECT k.seller_id, k.sku, COALESCE(NULLIF(r.record_id, ''), l.record_id, ''), l.id,
       CASE WHEN r.id IS NOT NULL THEN 'rejected'
            WHEN l.id IS NULL THEN ''
            WHEN l.active THEN 'live'
            ELSE 'inactive' END,
       COALESCE(r.reason, ''),
       CASE WHEN r.id IS NOT NULL THEN r.updated_at ELSE COALESCE(l.status_at, l.updated_at) END,
       {now}
FROM (SELECT DISTINCT seller_id, sku FROM ({changed}) AS c) AS k
LEFT JOIN {listing} AS l ON l.seller_id = k.seller_id AND l.sku = k.sku
LEFT JOIN {rejected} AS r ON r.seller_id = k.seller_id AND r.sku = k.sku
ORDER BY k.seller_id, k.sku
"""

_NOW = {"postgresql": "clock_timestamp()", "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now')"}


def record_sql(*, vendor: str, changed: str) -> str:
    return _RECORD.format(
        outbox=OUTBOX, listing=LISTING, rejected=REJECTED, now=_NOW[vendor], changed=changed
    )


# Postgres, the listing table's own triggers: the listing rows a statement inserted or
# updated are in its transition table ``new_rows`` as they now are (a statement changes a
# row once; an AFTER STATEMENT trigger runs once it is done), unique per (seller, sku).
# So the status is read from them, not looked up again in the listing table (which was a
# hash join over every seller's listings, or an index probe per row: a third of a first
# million-row ingest's time); only the rejection is joined, by its unique index.
_RECORD_LISTED = """
INSERT INTO {outbox}
    (seller_id, sku, record_id, listing_id, status, reason, status_at, created_at)
SELECT n.seller_id, n.sku, COALESCE(NULLIF(r.record_id, ''), n.record_id), n.id,
       CASE WHEN r.id IS NOT NULL THEN 'rejected'
            WHEN n.active THEN 'live'
            ELSE 'inactive' END,
       COALESCE(r.reason, ''),
       CASE WHEN r.id IS NOT NULL THEN r.updated_at ELSE COALESCE(n.status_at, n.updated_at) END,
       clock_timestamp()
FROM ({changed}) AS n
LEFT JOIN {rejected} AS r ON r.seller_id = n.seller_id AND r.sku = n.sku
ORDER BY n.seller_id, n.sku
"""


# (name, table, event, the SKUs changed: Postgres over transition tables ``new_rows`` /
# ``old_rows`` (the listing's triggers: its rows as they now are, for _RECORD_LISTED),
# SQLite over NEW / OLD, and SQLite's WHEN condition).
_TRIGGERS: tuple[tuple[str, str, str, str, str, str], ...] = (
    (
        "catalog_listing_status_ins",
        LISTING,
        "INSERT",
        "SELECT id, seller_id, sku, record_id, active, status_at, updated_at FROM new_rows",
        "SELECT NEW.seller_id AS seller_id, NEW.sku AS sku",
        "",
    ),
    (
        "catalog_listing_status_upd",
        LISTING,
        "UPDATE",
        "SELECT n.id, n.seller_id, n.sku, n.record_id, n.active, n.status_at, n.updated_at "
        "FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id "
        "WHERE o.active IS DISTINCT FROM n.active OR o.sku IS DISTINCT FROM n.sku "
        "OR o.record_id IS DISTINCT FROM n.record_id",
        "SELECT NEW.seller_id AS seller_id, NEW.sku AS sku",
        "OLD.active IS NOT NEW.active OR OLD.sku IS NOT NEW.sku "
        "OR OLD.record_id IS NOT NEW.record_id",
    ),
    (
        "catalog_rejected_status_ins",
        REJECTED,
        "INSERT",
        "SELECT seller_id, sku FROM new_rows",
        "SELECT NEW.seller_id AS seller_id, NEW.sku AS sku",
        "",
    ),
    (
        "catalog_rejected_status_upd",
        REJECTED,
        "UPDATE",
        "SELECT n.seller_id, n.sku FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id "
        "WHERE o.reason IS DISTINCT FROM n.reason OR o.sku IS DISTINCT FROM n.sku "
        "OR o.record_id IS DISTINCT FROM n.record_id",
        "SELECT NEW.seller_id AS seller_id, NEW.sku AS sku",
        "OLD.reason IS NOT NEW.reason OR OLD.sku IS NOT NEW.sku "
        "OR OLD.record_id IS NOT NEW.record_id",
    ),
    (
        "catalog_rejected_status_del",
        REJECTED,
        "DELETE",
        "SELECT seller_id, sku FROM old_rows",
        "SELECT OLD.seller_id AS seller_id, OLD.sku AS sku",
        "",
    ),
)


def _postgres_statements() -> list[str]:
    statements = []
    for name, table, event, changed, _, _ in _TRIGGERS:
        referencing = {
            "INSERT": "REFERENCING NEW TABLE AS new_rows",
            "UPDATE": "REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows",
            "DELETE": "REFERENCING OLD TABLE AS old_rows",
        }[event]
        if table == LISTING:
            body = _RECORD_LISTED.format(outbox=OUTBOX, rejected=REJECTED, changed=changed)
        else:
            body = record_sql(vendor="postgresql", changed=changed)
        statements += [
            f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN\n{body};\nRETURN NULL;\nEND;\n$$",
            f"DROP TRIGGER IF EXISTS {name} ON {table}",
            f"CREATE TRIGGER {name} AFTER {event} ON {table} {referencing} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {name}_fn()",
        ]
    return statements


def _sqlite_statements() -> list[str]:
    statements = []
    for name, table, event, _, changed, when in _TRIGGERS:
        condition = f" WHEN {when}" if when else ""
        body = record_sql(vendor="sqlite", changed=changed)
        statements += [
            f"DROP TRIGGER IF EXISTS {name}",
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{condition}\n"
            f"BEGIN\n{body};\nEND",
        ]
    return statements


def triggers_install(schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        statements = _postgres_statements()
    elif vendor == "sqlite":
        statements = _sqlite_statements()
    else:  # pragma: no cover - the project runs on these two
        raise NotImplementedError(f"no status triggers for {vendor}")
    for statement in statements:
        schema_editor.execute(statement, params=None)


def triggers_remove(schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    for name, table, _, _, _, _ in _TRIGGERS:
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}", params=None)
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}_fn()", params=None)
        else:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}", params=None)


def status_changes_record_all(*, seller_id: int) -> int:
    """Record every current status of the seller as a change (staff's "Re-send all"):
    one ``INSERT … SELECT``; returns the rows recorded."""
    # Constant table names only; the seller's id is a parameter.
    changed = (
        f"SELECT seller_id, sku FROM {LISTING} WHERE seller_id = %s "  # noqa: S608
        f"UNION SELECT seller_id, sku FROM {REJECTED} WHERE seller_id = %s"
    )
    # Parameters follow: the SQL's own % (SQLite's strftime) must be doubled.
    sql = record_sql(vendor=connection.vendor, changed="{changed}").replace("%", "%%")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql.replace("{changed}", changed), [seller_id, seller_id])
        return int(cursor.rowcount)


def status_changes_record(*, seller_id: int, skus: list[str]) -> int:
    """Record the current status of each of ``skus`` as a change (the reconciliation's
    "send again": the platform holds another status than the one we sent). Returns the
    rows recorded (a SKU neither listed nor rejected records its "" status: skipped)."""
    if not skus:
        return 0
    marks = ", ".join(["%s"] * len(skus))
    # Constant table names only; the seller's id and the SKUs are parameters.
    changed = (
        f"SELECT seller_id, sku FROM {LISTING} WHERE seller_id = %s AND sku IN ({marks}) "  # noqa: S608
        f"UNION SELECT seller_id, sku FROM {REJECTED} WHERE seller_id = %s AND sku IN ({marks})"
    )
    sql = record_sql(vendor=connection.vendor, changed="{changed}").replace("%", "%%")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql.replace("{changed}", changed), [seller_id, *skus, seller_id, *skus])
        return int(cursor.rowcount)


# --- whether EDRTS sends the seller's statuses (read by the sender and the import) ---------

# The product id field of a platform database: what an EDRTS record's ``id`` names.
PRODUCT_ID_FIELD = "id"


def product_id_field(source: CatalogSource) -> str:
    """The seller's field that feeds the SKU (the import's join key): "" when none."""
    for column, field in source.export_fields or []:
        if column == "sku" and field:
            return str(field)
    return PRODUCT_ID_FIELD if not source.export_fields else ""


def status_import_ran(*, source: CatalogSource) -> bool:
    """Whether the seller's listing-status import is set up and has run at the platform at
    least once (it created the ``mp_*`` fields EDRTS writes)."""
    status_import = StatusImport.objects.filter(source=source).first()
    return (
        status_import is not None
        and status_import.is_active
        and bool(status_import.last_download_time)
    )


def edrts_on(*, seller_id: int) -> bool:
    enabled = (
        StatusSync.objects.filter(seller_id=seller_id)
        .values_list("edrts_enabled", flat=True)
        .first()
    )
    return True if enabled is None else bool(enabled)


def edrts_sends(*, source: CatalogSource) -> bool:
    """Whether EDRTS sends this seller's statuses: on, and the SKU is the product id."""
    return edrts_on(seller_id=source.seller_id) and product_id_field(source) == PRODUCT_ID_FIELD
