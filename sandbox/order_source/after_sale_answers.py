"""The answers and checks the returns and refunds views share: 409s, violations (counted
with the caller's seller and client), the ``complete`` calls' body and answer, and the
return body's ``mp_order_number``."""

from django.http import HttpRequest, JsonResponse

from sandbox.common import switches, violations
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import BadBody, error_response, json_body
from sandbox.records.orders.models import Grant


def conflict(message: str) -> JsonResponse:
    return error_response("conflict", message, 409)


def _request_id(request: HttpRequest) -> str:
    return getattr(request, "sandbox_request_id", "")


def violation(request: HttpRequest, grant: Grant, kind: str, detail: str) -> None:
    violations.violation_record(
        kind=kind,
        seller=grant.seller.username,
        client_id=grant.client.client_id,
        request_id=_request_id(request),
        detail=detail,
    )


def complete_answer(view: dict) -> JsonResponse:
    """What ``complete`` answers: the return or refund (reading A of ``complete_answer``)
    or ``{}`` (B)."""
    return JsonResponse({} if switches.reading_b("complete_answer") else view)


def empty_object_body(request: HttpRequest) -> None:
    """``complete`` takes ``{}`` (or no body); anything else is a 400."""
    if not request.body:
        return
    body = json_body(request)
    if not isinstance(body, dict):
        raise BadBody("the body must be a JSON object ({})")
    if body:
        raise BadBody(f"unknown fields: {', '.join(sorted(body))} (the body is {{}})")


def order_number_refused(
    request: HttpRequest, grant: Grant, mp_order_number: str, body: dict
) -> JsonResponse | None:
    """The body's ``mp_order_number``: required and equal to the path's (reading A of
    ``return_order_number``: the reference's field list), or, when given, equal (B: its
    example leaves it out). A refusal is a 400 and a violation."""
    given = body.get("mp_order_number")
    if given is None and switches.reading_b("return_order_number"):
        return None
    if given == mp_order_number:
        return None
    problem = (
        "required (1-128 characters), equal to the order number in the path"
        if given is None
        else f"must equal the order number in the path ({mp_order_number!r})"
    )
    violation(
        request,
        grant,
        violations.RETURN_WITHOUT_ORDER_NUMBER,
        f"PUT {request.path}: mp_order_number {problem}",
    )
    return validation_error(
        f"the return is invalid: mp_order_number: {problem}", {"mp_order_number": problem}
    )
