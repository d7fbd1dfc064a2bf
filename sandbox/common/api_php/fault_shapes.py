"""Fault answers on /api.php in the API's own shape: ``{"status": "fail", "message"}``
(a 429 with the contract's wording and ``X-Rate-Limit-Group``). The HTML 502, the 504 of a
hang and the truncated body of ``malformed_json`` stay as they are everywhere."""

import json

from django.http import HttpResponse

from sandbox.common.api_php.errors import rate_limit_message
from sandbox.common.api_php.keys import GROUP_BY_ENDPOINT

_MESSAGES = {
    500: "Internal server error (sandbox fault)",
    503: "Service unavailable (sandbox fault)",
}


def platform_shaped(response: HttpResponse, *, kind: str, endpoint: str, wait: int) -> HttpResponse:
    if kind == "malformed_json":
        response.content = b'[{"id": "12", "name": "TRUNCATED'
        return response
    if response.status_code == 429:
        message = rate_limit_message(wait)
        response["X-Rate-Limit-Group"] = GROUP_BY_ENDPOINT.get(endpoint, "exports")
    elif response.status_code in _MESSAGES:
        message = _MESSAGES[response.status_code]
    else:
        return response
    response.content = json.dumps({"status": "fail", "message": message}).encode()
    return response
