"""Database triggers that keep the refund ledger and the staff money log append-only.

Neither the admin, the ORM nor plain SQL (``psql``) may change or delete a row of
``returns_refundledgerentry`` or ``returns_moneyaction``; the one change allowed is the
payments side marking a ledger entry paid out, once: ``paid_out_at`` from NULL to a time
(with ``paid_out_by``), every other column unchanged. A correction is a new reversing
entry (``services/ledger.py``), never an edit.

The triggers raise an integrity error (Postgres ``restrict_violation``, SQLite
``RAISE(ABORT)``), which Django reports as ``IntegrityError``.

* Postgres: one ``BEFORE UPDATE OR DELETE`` row trigger per table; the paid-out check
  compares the rows as JSON less the two paid-out columns, so a column added later is
  covered without touching the trigger.
* SQLite (development): ``BEFORE UPDATE`` / ``BEFORE DELETE`` triggers; SQLite has no
  row-as-JSON, so the UPDATE trigger lists the columns (``triggers_install`` is given
  them by the migration). SQLite rebuilds a table to alter it, which drops its triggers:
  a later migration that alters either table must call ``triggers_install`` again.
  Django's ``flush`` on SQLite deletes rows and is refused once the ledger has any; the
  test suite's SQLite runs drop the DELETE triggers around it (``sqlite_delete_triggers``,
  ``tests/conftest.py``), and Postgres's ``flush`` truncates.

``TRUNCATE`` is not refused (Postgres runs no row trigger for it): it is what a test
database's reset does, and no application path issues it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LEDGER = "returns_refundledgerentry"
MONEY_LOG = "returns_moneyaction"
PAID_OUT = ("paid_out_at", "paid_out_by")

_PG_LEDGER = f"""
CREATE OR REPLACE FUNCTION {LEDGER}_append_only_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND OLD.paid_out_at IS NULL AND NEW.paid_out_at IS NOT NULL
     AND (to_jsonb(NEW) - 'paid_out_at' - 'paid_out_by')
         = (to_jsonb(OLD) - 'paid_out_at' - 'paid_out_by')
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION
    'the refund ledger is append-only: % of entry % refused (correct with a reversing entry)',
    TG_OP, OLD.id USING ERRCODE = 'restrict_violation';
END;
$$"""

_PG_MONEY_LOG = f"""
CREATE OR REPLACE FUNCTION {MONEY_LOG}_append_only_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the staff money log is append-only: % of row % refused', TG_OP, OLD.id
    USING ERRCODE = 'restrict_violation';
END;
$$"""


def _postgres_statements() -> list[str]:
    statements = [_PG_LEDGER, _PG_MONEY_LOG]
    for table in (LEDGER, MONEY_LOG):
        statements += [
            f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_append_only_fn()",
        ]
    return statements


_SQLITE_TABLES = ((LEDGER, "the refund ledger"), (MONEY_LOG, "the staff money log"))


def _sqlite_trigger(table: str, what: str, event: str, condition: str = "") -> tuple[str, str]:
    """(drop, create) of one SQLite trigger refusing ``event`` on ``table``."""
    name = f"{table}_no_{event.lower()}"
    return (
        f"DROP TRIGGER IF EXISTS {name}",
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW{condition}\n"
        f"BEGIN SELECT RAISE(ABORT, '{what} is append-only: {event} refused'); END",
    )


def sqlite_delete_triggers() -> list[tuple[str, str]]:
    """(drop, create) of the SQLite DELETE triggers: a test database's reset on SQLite
    (Django's ``flush`` deletes rows there) drops them, empties the tables and puts them
    back (``tests/conftest.py``)."""
    return [_sqlite_trigger(table, what, "DELETE") for table, what in _SQLITE_TABLES]


def _sqlite_statements(ledger_columns: Sequence[str]) -> list[str]:
    unchanged = " AND ".join(
        f'NEW."{column}" IS OLD."{column}"' for column in ledger_columns if column not in PAID_OUT
    )
    paid_out_once = f"OLD.paid_out_at IS NULL AND NEW.paid_out_at IS NOT NULL AND {unchanged}"
    statements: list[str] = []
    for table, what in _SQLITE_TABLES:
        condition = f" WHEN NOT ({paid_out_once})" if table == LEDGER else ""
        statements += _sqlite_trigger(table, what, "UPDATE", condition)
    for pair in sqlite_delete_triggers():
        statements += pair
    return statements


def triggers_install(schema_editor: Any, *, ledger_columns: Sequence[str]) -> None:
    """Install (or re-install) the triggers; ``ledger_columns``: the ledger table's
    columns as the migration knows them (SQLite's UPDATE trigger compares each)."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        statements = _postgres_statements()
    elif vendor == "sqlite":
        statements = _sqlite_statements(ledger_columns)
    else:  # pragma: no cover - the project runs on these two
        raise NotImplementedError(f"no append-only triggers for {vendor}")
    for statement in statements:
        schema_editor.execute(statement, params=None)


def triggers_remove(schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    for table in (LEDGER, MONEY_LOG):
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {table}_append_only_fn()")
        else:
            for event in ("update", "delete"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_{event}")
