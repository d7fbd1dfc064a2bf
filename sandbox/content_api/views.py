"""``GET /api.php/dbs/{db_id}/raw_data`` and ``…/transformed_data``: a database's rows,
paged (``limit``, ``offset``), ordered by id (``direction`` ``>`` or ``<``), filtered by a
``selector`` (``selectors.py``). The sandbox has no transformers: both answer the rows as
held. Auth as the Platform API (the API token in ``x-api-key`` and ``Authorization:
Bearer``), rate-limited as its own group ``content``."""

from django.http import HttpRequest, JsonResponse

from sandbox.common import violations
from sandbox.common.api_php.endpoint import api_php_endpoint
from sandbox.common.api_php.errors import ApiError
from sandbox.content_api.selectors import SelectorError, selector_parse
from sandbox.records.api_users.callers import platform_user
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.access import db_for_user

GROUP = "content"
PARAMETERS = frozenset({"direction", "limit", "offset", "selector"})
MAX_LIMIT = 1000  # a page the sandbox serves at most (the reference names no cap)
DEFAULT_LIMIT = 100


def _refused(request: HttpRequest, user: PlatformUser, detail: str) -> ApiError:
    violations.violation_record(
        kind=violations.CONTENT_QUERY,
        seller=user.username,
        client_id=f"api-user:{user.username}",
        request_id=getattr(request, "sandbox_request_id", ""),
        detail=f"{request.method} {request.path}: {detail}",
    )
    return ApiError(detail, 400)


def _whole(request: HttpRequest, user: PlatformUser, value: str, name: str, low: int) -> int:
    if not value.isdigit() or int(value) < low:
        raise _refused(request, user, f"{name} must be a whole number of at least {low}")
    return int(value)


def _rows(request: HttpRequest, user: PlatformUser, db_id: str, params: dict[str, str]) -> dict:
    db = db_for_user(user=user, db_id=db_id)
    limit = _whole(request, user, params.get("limit", str(DEFAULT_LIMIT)), "limit", 1)
    if limit > MAX_LIMIT:
        raise _refused(request, user, f"limit must be at most {MAX_LIMIT}")
    offset = _whole(request, user, params.get("offset", "0"), "offset", 0)
    direction = params.get("direction", ">")
    if direction not in (">", "<"):
        raise _refused(request, user, "direction must be > or <")
    rows = db.rows.all()
    if "selector" in params:
        try:
            clauses = selector_parse(params["selector"])
        except SelectorError as exc:
            raise _refused(request, user, str(exc)) from exc
        held = [row.data for row in rows.order_by("id")]
        chosen = [data for data in held if any(str(data.get(f, "")) == v for f, v in clauses)]
    else:
        chosen = [row.data for row in rows.order_by("id")]
    if direction == "<":
        chosen.reverse()
    page = chosen[offset : offset + limit]
    return {
        "status": "success",
        "total_count": len(chosen),
        "data": [{"id": str(data.get("id", "")), **data} for data in page],
        "total_chunks": 1,
    }


@api_php_endpoint(
    group=GROUP, methods=("GET",), auth=platform_user, parameters=PARAMETERS, pass_params=True
)
def data_rows(
    request: HttpRequest, user: PlatformUser, params: dict[str, str], db_id: str
) -> JsonResponse:
    """Raw and transformed data alike (the sandbox has no transformers)."""
    return JsonResponse(_rows(request, user, db_id, params))
