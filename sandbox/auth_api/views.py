"""Views of the Authentication API under /api.php (thin: services do the work)."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from sandbox.auth_api.login import login
from sandbox.common import switches
from sandbox.common.api_php.endpoint import api_php_endpoint, strings_response
from sandbox.common.api_php.errors import ApiError, fail
from sandbox.common.json_bodies import json_object_body
from sandbox.records.api_users.callers import platform_user, platform_user_key_only
from sandbox.records.api_users.models import PlatformAccount, PlatformUser

LIST_ACCOUNTS_PARAMS = frozenset({"page", "results_per_page", "query"})
DEFAULT_PER_PAGE, MAX_PER_PAGE = 25, 100


def _account_json(account: PlatformAccount) -> dict:
    return {"id": str(account.id), "account_name": account.account_name}


# The login reads no query string (as before: it neither takes nor refuses one).
@api_php_endpoint(group="login", methods=("POST",), auth=None, parameters=None)
def login_view(request: HttpRequest) -> HttpResponse:
    return strings_response(login(body=json_object_body(request)))


# The interface document's table lists this call with ``x-api-key`` alone; the other
# accounts calls need both headers like every Platform call (platform-api-contract.md).
@api_php_endpoint(group="accounts", methods=("GET",), auth=platform_user_key_only)
def _user_accounts(request: HttpRequest, user: PlatformUser) -> HttpResponse:
    return strings_response([_account_json(a) for a in user.accounts.order_by("id")])


@csrf_exempt
def user_accounts(request: HttpRequest) -> HttpResponse:
    """The deprecated ``GET /user/accounts``; under reading B of ``accounts`` the call is
    gone, as on a platform that removed it: 404 before anything else (no auth, no rate
    limit), and ``/user/list-accounts`` is the way."""
    if switches.reading_b("accounts"):
        return fail("Not found: /user/accounts is not served; use /user/list-accounts", 404)
    return _user_accounts(request)


def _positive(params: dict[str, str], key: str, default: int, maximum: int) -> int:
    raw = params.get(key)
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= maximum:
        raise ApiError(f"{key}: must be a whole number from 1 to {maximum}")
    return int(raw)


@api_php_endpoint(
    group="accounts",
    methods=("GET",),
    auth=platform_user,
    parameters=LIST_ACCOUNTS_PARAMS,
    pass_params=True,
)
def list_accounts(request: HttpRequest, user: PlatformUser, params: dict[str, str]) -> HttpResponse:
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
