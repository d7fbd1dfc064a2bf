"""The error helpers every room uses: the order APIs' 400 with per-field problems, and the
/api.php check that an endpoint taking no query parameters got none."""

from django.http import HttpRequest, JsonResponse

from sandbox.common.api_php.errors import ApiError
from sandbox.common.json_bodies import error_response
from sandbox.common.query_params import problems_message, query_params


def validation_error(message: str, fields: dict[str, str]) -> JsonResponse:
    return error_response("validation_error", message, 400, fields=fields)


def no_query(request: HttpRequest) -> None:
    """Raise ``ApiError`` (400) naming any query parameter sent to an endpoint taking none."""
    _, problems = query_params(request)
    if problems:
        raise ApiError(problems_message(problems))
