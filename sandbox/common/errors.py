"""The error helpers every room uses: the order APIs' 405, their 400 with per-field
problems (a refused query string is one). The endpoint decorator (``common.endpoint``)
refuses query strings for every room."""

from django.http import JsonResponse

from sandbox.common.json_bodies import error_response
from sandbox.common.query_params import problems_message


def validation_error(message: str, fields: dict[str, str]) -> JsonResponse:
    return error_response("validation_error", message, 400, fields=fields)


def method_not_allowed(methods: tuple[str, ...]) -> JsonResponse:
    allowed = ", ".join(methods)
    response = error_response("method_not_allowed", f"use {allowed}", 405)
    response["Allow"] = allowed
    return response


def query_refused(problems: dict[str, str]) -> JsonResponse:
    return validation_error(f"invalid query: {problems_message(problems)}", problems)
