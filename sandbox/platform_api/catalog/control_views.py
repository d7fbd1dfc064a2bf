"""Control API of the sellers' databases (/sandbox/api, local only): create a database,
list and change its rows, load a generated catalog, seed the demo data."""

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404

from sandbox.common.api_php.control import platform_control, required_text
from sandbox.common.json_bodies import BadBody, json_object_body
from sandbox.platform_api.catalog.databases import db_create, db_generate, db_json, rows_change
from sandbox.platform_api.catalog.demo import demo_seed
from sandbox.records.api_users.models import PlatformAccount, PlatformUser
from sandbox.records.api_users.users import account_upsert
from sandbox.records.databases.models import CatalogDatabase

MAX_GENERATED = 1_000_000


def _whole(body: dict, key: str, default: int, minimum: int = 0) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadBody(f"{key} must be a whole number >= {minimum}")
    return value


def _account(body: dict) -> PlatformAccount:
    if body.get("account_id") is not None:
        account = PlatformAccount.objects.filter(id=int(str(body["account_id"]))).first()
        if account is None:
            raise BadBody("account_id: unknown account")
        return account
    return account_upsert(account_name=required_text(body, "account_name"))


def _owner(body: dict) -> PlatformUser | None:
    """``owner``: the seller's own API user (a username), or null for none."""
    name = body.get("owner")
    if name is None:
        return None
    if not isinstance(name, str) or not name:
        raise BadBody("owner must be an API user's username or null")
    user = PlatformUser.objects.filter(username=name).first()
    if user is None:
        raise BadBody(f"owner: no API user {name!r}")
    return user


@platform_control(("GET", "POST"))
def dbs(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        rows = CatalogDatabase.objects.select_related("account").order_by("id")
        return JsonResponse({"dbs": [db_json(db) for db in rows]})
    body = json_object_body(request)
    fields = body.get("fields")
    if fields is not None and (
        not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields)
    ):
        raise BadBody("fields must be a list of names")
    rows = body.get("rows", [])
    if not isinstance(rows, list):
        raise BadBody("rows must be a list of objects")
    db = db_create(
        account=_account(body), name=required_text(body, "name"), fields=fields, rows=rows
    )
    owner = _owner(body)
    if owner is not None:
        db.owner = owner
        db.save(update_fields=["owner"])
    generate = _whole(body, "generate", 0)
    if generate:
        db_generate(db=db, count=generate, seed=_whole(body, "seed", 1), replace=False)
    return JsonResponse(db_json(db))


@platform_control(("POST",))
def db_owner(request: HttpRequest, db_id: int) -> JsonResponse:
    """``{"owner": username or null}``: who owns the database (EDRTS counts a product created
    by any other API user as a marketplace's doing)."""
    db = get_object_or_404(CatalogDatabase, id=db_id)
    body = json_object_body(request)
    if "owner" not in body:
        raise BadBody("owner (a username, or null) is required")
    db.owner = _owner(body)
    db.save(update_fields=["owner"])
    return JsonResponse(db_json(db))


@platform_control(("GET", "POST"))
def db_rows(request: HttpRequest, db_id: int) -> JsonResponse:
    db = get_object_or_404(CatalogDatabase, id=db_id)
    if request.method == "POST":
        return JsonResponse(rows_change(db=db, body=json_object_body(request)))
    try:
        page = max(1, int(request.GET.get("page", 1)))
        per_page = max(1, min(int(request.GET.get("per_page", 100)), 1000))
    except ValueError as exc:
        raise BadBody("page and per_page must be whole numbers") from exc
    chosen = db.rows.order_by("id")[(page - 1) * per_page : page * per_page]
    return JsonResponse({"db": db_json(db), "page": page, "rows": [row.data for row in chosen]})


@platform_control(("POST",))
def db_generate_view(request: HttpRequest, db_id: int) -> JsonResponse:
    db = get_object_or_404(CatalogDatabase, id=db_id)
    body = json_object_body(request, allow_empty=True)
    count = _whole(body, "rows", 100_000, 1)
    if count > MAX_GENERATED:
        raise BadBody(f"rows must be at most {MAX_GENERATED}")
    total = db_generate(
        db=db,
        count=count,
        seed=_whole(body, "seed", 1),
        sku_prefix=str(body.get("sku_prefix") or ""),
        replace=bool(body.get("replace", True)),
    )
    return JsonResponse({"db_id": str(db.id), "row_count": total})


@platform_control(("POST",))
def seed_demo(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    return JsonResponse(demo_seed(rows=_whole(body, "rows", 2000, 1)))
