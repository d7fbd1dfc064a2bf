"""The "additive fields" switch: unknown fields in every JSON object the interface answers.

The interface document asks integrations to tolerate additive, non-breaking changes. With
the switch on (control API ``/sandbox/api/additive-fields`` or ``serve --additive-fields``)
every JSON object in an ``/api/v1`` answer (the top level, each order, line, shipment,
the listing wrapper, error bodies) gains ``x_sandbox_note``, and orders gain
``imported_at`` / ``seller_updated_at`` (``fulfillment.order_json``). Off by default.
"""

import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from sandbox.common import switches

NOTE_FIELD = "x_sandbox_note"
NOTE = "an additive field the contract does not name; clients must ignore it"


def with_notes(data: Any) -> Any:
    """``data`` with ``NOTE_FIELD`` added to every object, however deep."""
    if isinstance(data, dict):
        return {**{key: with_notes(value) for key, value in data.items()}, NOTE_FIELD: NOTE}
    if isinstance(data, list):
        return [with_notes(item) for item in data]
    return data


class AdditiveFieldsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not switches.current.additive_fields
            or not request.path.startswith(("/api/v1/", "/api.php/"))
            or response.streaming
            or response.get("Content-Type", "").split(";")[0] != "application/json"
        ):
            return response
        try:
            data = json.loads(response.content)
        except ValueError:
            return response  # a malformed_json fault stays malformed
        response.content = json.dumps(with_notes(data)).encode()
        return response
