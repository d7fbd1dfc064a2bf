"""The body of ``POST /access_token``: form-encoded, JSON, or either.

The references disagree (contract, "token call"): the older API page sends the token call
form-encoded, the current one (``…/authentication/refresh-seller-access-token``) sends
JSON. The ``token_body`` switch picks what the sandbox takes: both (A, the default), JSON
only (B) or form only (C). Either way the fields are the same strings.
"""

import json

from django.http import HttpRequest

from sandbox.common import switches

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


class TokenBodyError(ValueError):
    pass


def token_fields(request: HttpRequest) -> dict[str, str]:
    """The token call's fields; ``TokenBodyError`` names what is wrong with the body."""
    reading = switches.current.token_body
    accepted = {"A": (FORM, JSON), "B": (JSON,), "C": (FORM,)}[reading]
    content_type = request.content_type or ""
    if content_type not in accepted:
        raise TokenBodyError(f"the token request must be {' or '.join(accepted)}")
    if content_type == FORM:
        return {key: request.POST.get(key, "") for key in request.POST}
    try:
        body = json.loads(request.body or b"")
    except (ValueError, UnicodeDecodeError) as exc:
        raise TokenBodyError("the token request's body is not JSON") from exc
    if not isinstance(body, dict):
        raise TokenBodyError("the token request's body must be a JSON object")
    wrong = sorted(key for key, value in body.items() if not isinstance(value, str))
    if wrong:
        raise TokenBodyError(f"must be strings: {', '.join(wrong)}")
    return body
