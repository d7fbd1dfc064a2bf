"""Reading JSON request bodies and answering JSON errors in one consistent shape."""

import json

from django.http import HttpRequest, JsonResponse


class BadBody(Exception):
    pass


def json_body(request: HttpRequest) -> object:
    if not request.body:
        raise BadBody("a JSON body is required")
    try:
        return json.loads(request.body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadBody(f"body is not valid JSON: {exc}") from exc


def json_object_body(request: HttpRequest, *, allow_empty: bool = False) -> dict:
    if allow_empty and not request.body:
        return {}
    body = json_body(request)
    if not isinstance(body, dict):
        raise BadBody("the body must be a JSON object")
    return body


def error_response(error: str, message: str, status: int, **extra: object) -> JsonResponse:
    return JsonResponse({"error": error, "message": message, **extra}, status=status)
