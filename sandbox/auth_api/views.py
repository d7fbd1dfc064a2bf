"""Views of the Authentication API under /api.php (thin: services do the work)."""

from django.http import HttpRequest, HttpResponse

from sandbox.api_php.endpoint import platform_endpoint, strings_response
from sandbox.api_php.errors import ApiError
from sandbox.auth_api.login import login
from sandbox.auth_api.models import PlatformAccount, PlatformUser
from sandbox.catalog.access import account_for_user
from sandbox.catalog.models import CatalogDatabase
from sandbox.exports.models import ExportRun
from sandbox.imports.models import Import
from sandbox.json_bodies import json_object_body
from sandbox.query_params import problems_message, query_params

LIST_ACCOUNTS_PARAMS = frozenset({"page", "results_per_page", "query"})
DEFAULT_PER_PAGE, MAX_PER_PAGE = 25, 100


def _account_json(account: PlatformAccount) -> dict:
    return {"id": str(account.id), "account_name": account.account_name}


def _no_query(request: HttpRequest) -> None:
    _, problems = query_params(request)
    if problems:
        raise ApiError(problems_message(problems))


@platform_endpoint(group="login", methods=("POST",), authenticated=False)
def login_view(request: HttpRequest) -> HttpResponse:
    return strings_response(login(body=json_object_body(request)))


@platform_endpoint(group="accounts", methods=("GET",))
def user_accounts(request: HttpRequest, user: PlatformUser) -> HttpResponse:
    _no_query(request)
    return strings_response([_account_json(a) for a in user.accounts.order_by("id")])


def _positive(params: dict[str, str], key: str, default: int, maximum: int) -> int:
    raw = params.get(key)
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= maximum:
        raise ApiError(f"{key}: must be a whole number from 1 to {maximum}")
    return int(raw)


@platform_endpoint(group="accounts", methods=("GET",))
def list_accounts(request: HttpRequest, user: PlatformUser) -> HttpResponse:
    params, problems = query_params(request, LIST_ACCOUNTS_PARAMS)
    if problems:
        raise ApiError(problems_message(problems))
    page = _positive(params, "page", 1, 1_000_000)
    per_page = _positive(params, "results_per_page", DEFAULT_PER_PAGE, MAX_PER_PAGE)
    rows = user.accounts.order_by("id")
    if params.get("query"):
        rows = rows.filter(account_name__icontains=params["query"])
    total = rows.count()
    chosen = rows[(page - 1) * per_page : page * per_page]
    return strings_response(
        {
            "accounts": [_account_json(a) for a in chosen],
            "pagination": {
                "page": str(page),
                "results_per_page": str(per_page),
                "total_results": str(total),
                "total_pages": str(max(1, -(-total // per_page))),
            },
        }
    )


def _db_json(db: CatalogDatabase) -> dict:
    latest = ExportRun.objects.filter(export__db=db).order_by("-id").first()
    latest_import = (
        Import.objects.filter(db=db, last_run_at__isnull=False).order_by("-last_run_at").first()
    )
    return {
        "id": str(db.id),
        "name": db.name,
        # Our choice: the status of the database's latest export run and of the import run
        # started last ("none" before any).
        "import_status": latest_import.status if latest_import else "none",
        "export_status": latest.status if latest else "none",
    }


@platform_endpoint(group="accounts", methods=("GET",))
def account_dbs(request: HttpRequest, user: PlatformUser, account_id: str) -> HttpResponse:
    _no_query(request)
    account = account_for_user(user=user, account_id=account_id)
    return strings_response([_db_json(db) for db in account.dbs.order_by("id")])
