"""Database helpers the ORM has no cheap form of."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections, router
from django.db.models import (
    BigIntegerField,
    BooleanField,
    CharField,
    Count,
    Field,
    ForeignObjectRel,
    IntegerField,
    Model,
    PositiveIntegerField,
    PositiveSmallIntegerField,
    QuerySet,
    SmallIntegerField,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Coalesce

# Fields whose database value is the Python value itself when it already has this type
# (``get_db_prep_save`` then hands it back unchanged, on Postgres and SQLite).
_AS_IS_TYPES: dict[type[Field[Any, Any]], type] = {
    BigIntegerField: int,
    BooleanField: bool,
    CharField: str,
    IntegerField: int,
    PositiveIntegerField: int,
    PositiveSmallIntegerField: int,
    SmallIntegerField: int,
    TextField: str,
}

# Rows per statement: keeps the parameter count far below SQLite's limit (32766).
CHUNK_ROWS = 500


def rows_update(objs: Sequence[Model], fields: Sequence[str]) -> int:
    """Write ``fields`` of each object (different values per row) in one UPDATE.

    Like ``QuerySet.bulk_update``, but as ``UPDATE … FROM (VALUES …)`` instead of one
    ``CASE WHEN pk = … THEN …`` per field and row: measured on a 50-row push batch, the
    ORM spent ~9 ms per row building and compiling those expressions, this ~0.1 ms.
    Values go through each field's ``get_db_prep_save`` as ``save()`` would; ``auto_now``
    fields are not touched (set them yourself). Postgres and SQLite (3.33+).
    """
    if len(objs) > CHUNK_ROWS:
        return sum(
            rows_update(objs[i : i + CHUNK_ROWS], fields) for i in range(0, len(objs), CHUNK_ROWS)
        )
    if not objs:
        return 0
    model = type(objs[0])
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    pk = meta.pk
    columns = [_concrete(meta.get_field(name)) for name in fields]
    postgres = connection.vendor == "postgresql"

    def placeholder(field: Field[Any, Any]) -> str:
        # Postgres types VALUES columns from their first row; unknown-typed parameters
        # need a cast to the column's type. SQLite takes any value as it comes.
        return f"%s::{field.db_type(connection)}" if postgres else "%s"

    first = "(" + ", ".join(placeholder(f) for f in [pk, *columns]) + ")"
    # The other rows' values take the first row's types, so they need no casts: a
    # 50-row batch's statement then stays under psycopg's 4 KB cache limit for parsed
    # queries (parsing the casted 9 KB text again for every batch cost ~5 % of a push).
    row = "(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"
    params: list[Any] = []  # as get_db_prep_save returns them, for the driver to adapt
    # Plain columns (text, integers, booleans) go as they are: their get_db_prep_save only
    # hands the value back, and calling it for every value of a 50-row batch was ~5 % of
    # a push's CPU. Every other field (dates, JSON, decimals, keys) is prepared as usual.
    # Exact classes only: a subclass may prepare its values its own way.
    prepared = [(f, f.attname, _AS_IS_TYPES.get(type(f))) for f in columns]
    for obj in objs:
        params.append(pk.get_db_prep_save(obj.pk, connection))
        for field, attname, as_is in prepared:
            value = getattr(obj, attname)
            if value is None or type(value) is as_is:
                params.append(value)
            else:
                params.append(field.get_db_prep_save(value, connection))
    if postgres:
        names = ["_pk", *(_column(f) for f in columns)]
        alias = "v(" + ", ".join(quote(n) for n in names) + ")"
    else:  # SQLite names VALUES columns column1, column2, ... and takes no column list
        names = [f"column{i}" for i in range(1, len(columns) + 2)]
        alias = "v"
    table = quote(meta.db_table)
    assignments = ", ".join(
        f"{quote(_column(f))} = v.{quote(name)}" for f, name in zip(columns, names[1:], strict=True)
    )
    # Only quoted names from the model's meta go into the text; every value is a parameter.
    sql = (
        f"UPDATE {table} SET {assignments} "  # noqa: S608
        f"FROM (VALUES {', '.join([first] + [row] * (len(objs) - 1))}) AS {alias} "
        f"WHERE {table}.{quote(_column(pk))} = v.{quote(names[0])}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        updated: int = cursor.rowcount  # the DB-API's count; Django's stub leaves it Any
        return updated


def rows_insert(objs: Sequence[Model]) -> int:
    """Insert new objects of one model, ids left to the database (not set on the objects).

    Postgres: one ``COPY`` (psycopg formats the rows in C): measured on the push's call
    log and sync events, 50 rows a batch, ``bulk_create``'s ``INSERT … UNNEST`` spent most
    of its time escaping every array element in Python. Elsewhere ``bulk_create``. Values
    go through each field's ``pre_save`` (``auto_now_add``) and ``get_db_prep_save`` as
    ``bulk_create`` would. For append-only records nobody reads back in the same step.
    """
    if not objs:
        return 0
    model = type(objs[0])
    connection = connections[router.db_for_write(model)]
    if connection.vendor != "postgresql":
        return len(model._default_manager.bulk_create(objs))
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    names = ", ".join(quote(_column(f)) for f in fields)
    # Only quoted names from the model's meta go into the text; rows go as COPY data.
    sql = f"COPY {quote(meta.db_table)} ({names}) FROM STDIN"
    # As in rows_update, a plain column's value of the column's type goes as it is;
    # ``auto_now_add`` and every other field go through pre_save and the field.
    prepared = [(f, f.attname, _AS_IS_TYPES.get(type(f))) for f in fields]
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for obj in objs:
            row: list[Any] = []
            for field, attname, as_is in prepared:
                value = getattr(obj, attname) if as_is else field.pre_save(obj, True)
                if not (value is None or type(value) is as_is):
                    value = field.get_db_prep_save(value, connection)
                row.append(value)
            copy.write_row(row)
    return len(objs)


def _concrete(field: Field[Any, Any] | ForeignObjectRel) -> Field[Any, Any]:
    # Like bulk_update: a reverse relation has no column to write.
    if not isinstance(field, Field):
        raise ValueError(f"rows_update() writes fields with a column, not {field.name!r}")
    return field


def _column(field: Field[Any, Any]) -> str:
    if field.column is None:  # e.g. a ForeignObject: nothing to write
        raise ValueError(f"rows_update() writes fields with a column, not {field.name!r}")
    return field.column


def count_subquery(queryset: QuerySet[Any], group_by: str) -> Coalesce:
    """``COUNT(*)`` of ``queryset`` as a correlated subquery (0 when there are no rows)."""
    counted = queryset.order_by().values(group_by).annotate(n=Count("*")).values("n")[:1]
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def rows_prune(query: QuerySet[Model], *, batch_size: int = 5000) -> int:
    """Delete the rows of ``query`` in batches of ``batch_size``; returns how many.

    Set-based: one ``DELETE … WHERE id IN (SELECT id … LIMIT n)`` per batch (no row read
    into Python), repeated until nothing is left, so a first run over a long history
    neither holds a long lock nor grows the worker. The count includes rows deleted by
    cascade."""
    model = query.model
    deleted = 0
    while True:
        batch = query.order_by("pk").values("pk")[:batch_size]
        count, _ = model._default_manager.filter(pk__in=batch).delete()
        deleted += count
        if count < batch_size:
            return deleted
