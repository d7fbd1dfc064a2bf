"""Databases and their rows: creation, bulk loading, row changes (control API), JSON."""

from collections.abc import Iterable

from django.db import transaction

from sandbox.common import clock
from sandbox.common.json_bodies import BadBody
from sandbox.platform_api.catalog.products import PRODUCT_FIELDS, product_rows
from sandbox.records.api_users.models import PlatformAccount
from sandbox.records.databases.models import CatalogDatabase, CatalogRow

BATCH = 2000


def _strings(row: dict, fields: list[str], where: str) -> dict[str, str]:
    if not isinstance(row, dict):
        raise BadBody(f"{where}: each row must be an object")
    unknown = [k for k in row if k not in fields]
    if unknown:
        raise BadBody(f"{where}: unknown field(s) {', '.join(unknown)}; fields are {fields}")
    out = {}
    for key, value in row.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise BadBody(f"{where}.{key}: must be a string or a number")
        out[key] = str(value)
    return out


def rows_load(*, db: CatalogDatabase, rows: Iterable[dict[str, str]]) -> int:
    """Append rows in batches (bounded memory for a generated 100 000-row catalog)."""
    now = clock.now()
    batch: list[CatalogRow] = []
    count = 0
    for data in rows:
        full = {field: data.get(field, "") for field in db.fields}
        batch.append(CatalogRow(db=db, key=full.get("id", ""), data=full, updated_at=now))
        if len(batch) >= BATCH:
            CatalogRow.objects.bulk_create(batch)
            count += len(batch)
            batch = []
    CatalogRow.objects.bulk_create(batch)
    CatalogDatabase.objects.filter(id=db.id).update(updated_at=now)
    return count + len(batch)


def db_create(
    *,
    account: PlatformAccount,
    name: str,
    fields: list[str] | None = None,
    rows: list[dict] | None = None,
) -> CatalogDatabase:
    fields = list(fields or PRODUCT_FIELDS)
    if "id" not in fields:
        raise BadBody("fields: must include id")
    now = clock.now()
    db = CatalogDatabase.objects.create(
        account=account, name=name, fields=fields, created_at=now, updated_at=now
    )
    checked = [_strings(r, fields, f"rows[{i}]") for i, r in enumerate(rows or [])]
    rows_load(db=db, rows=checked)
    return db


@transaction.atomic
def db_generate(
    *, db: CatalogDatabase, count: int, seed: int, sku_prefix: str = "", replace: bool = True
) -> int:
    """Load ``count`` generated products (replacing the rows unless ``replace`` is false)."""
    if db.fields != PRODUCT_FIELDS:
        raise BadBody("generate: the database's fields are not the product fields")
    if replace:
        CatalogRow.objects.filter(db=db).delete()
    start = 1 if replace else CatalogRow.objects.filter(db=db).count() + 1
    prefix = sku_prefix or f"DB{db.id}"
    shop = "".join(c for c in db.account.account_name.lower() if c.isalnum()) or "shop"
    rows_load(
        db=db, rows=product_rows(count=count, seed=seed, sku_prefix=prefix, shop=shop, start=start)
    )
    return CatalogRow.objects.filter(db=db).count()


@transaction.atomic
def rows_change(*, db: CatalogDatabase, body: dict) -> dict:
    """``rows``: changes of rows found by ``id``; ``add``: new rows; ``delete``: ids."""
    changes, added, deleted = body.get("rows", []), body.get("add", []), body.get("delete", [])
    if not all(isinstance(x, list) for x in (changes, added, deleted)):
        raise BadBody("rows, add and delete must be lists")
    now = clock.now()
    updated = 0
    for i, change in enumerate(changes):
        values = _strings(change, [*db.fields, "new_id"], f"rows[{i}]")
        key = values.pop("id", None)
        if key is None:
            raise BadBody(f"rows[{i}].id: required (the row to change)")
        if "new_id" in values:
            values["id"] = values.pop("new_id")
        found = list(CatalogRow.objects.filter(db=db, key=key))
        if not found:
            raise BadBody(f"rows[{i}].id: no row with id {key!r}")
        for row in found:
            row.data = {**row.data, **values}
            row.key = row.data.get("id", "")
            row.updated_at = now
        CatalogRow.objects.bulk_update(found, ["data", "key", "updated_at"])
        updated += len(found)
    checked = [_strings(r, db.fields, f"add[{i}]") for i, r in enumerate(added)]
    rows_load(db=db, rows=checked)
    removed = 0
    if deleted:
        removed, _ = CatalogRow.objects.filter(db=db, key__in=[str(k) for k in deleted]).delete()
    CatalogDatabase.objects.filter(id=db.id).update(updated_at=now)
    return {
        "updated": updated,
        "added": len(checked),
        "deleted": removed,
        "row_count": CatalogRow.objects.filter(db=db).count(),
    }


def db_json(db: CatalogDatabase) -> dict:
    """The control API's view of a database (ints: not the platform's answer)."""
    return {
        "id": db.id,
        "account_id": db.account_id,
        "account_name": db.account.account_name,
        "name": db.name,
        "owner": db.owner.username if db.owner else None,
        "fields": db.fields,
        "row_count": CatalogRow.objects.filter(db=db).count(),
        "updated_at": db.updated_at.isoformat(),
    }
