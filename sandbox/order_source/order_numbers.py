"""The listings' ``mp_order_numbers``: how many one call may carry, and what an unknown
number does. The reference (…/orders/get-orders, …/refunds/get-orders-refunds,
…/returns) says only "comma-delimited list of marketplace order numbers"; the silent
points are switched (``switches``):

* ``order_numbers_cap``: at most 100 numbers per call (A) or at most 50, the largest page
  (B); more is refused 400 naming ``mp_order_numbers``. Over 50 counts an
  ``order_numbers_over_page`` violation under both readings: a client that asks for more
  orders than one page holds must follow the cursor, and is refused by a stricter reading.
* ``unknown_order_numbers``: on ``GET /orders``, a number the seller's account does not
  hold is simply absent from the answer (A) or refuses the call, 400 naming the unknown
  numbers (B: the reference's only error for a bad query).
"""

from django.http import HttpRequest, JsonResponse

from sandbox.common import switches, violations
from sandbox.common.errors import validation_error
from sandbox.records.orders.models import Grant, Order

PAGE_MAX = 50
CAP_A = 100


def order_numbers_cap() -> int:
    return PAGE_MAX if switches.reading_b("order_numbers_cap") else CAP_A


def numbers_of(params: dict[str, str]) -> list[str]:
    return params["mp_order_numbers"].split(",") if "mp_order_numbers" in params else []


def over_page_count(request: HttpRequest, grant: Grant, params: dict[str, str]) -> None:
    """An ``order_numbers_over_page`` violation for a call with more than 50 numbers."""
    numbers = numbers_of(params)
    if len(numbers) > PAGE_MAX:
        violations.violation_record(
            kind=violations.ORDER_NUMBERS_OVER_PAGE,
            seller=grant.seller.username,
            client_id=grant.client.client_id,
            request_id=getattr(request, "sandbox_request_id", ""),
            detail=f"{request.path}: {len(numbers)} mp_order_numbers in one call (a page "
            f"holds at most {PAGE_MAX})",
        )


def unknown_refusal(grant: Grant, params: dict[str, str]) -> JsonResponse | None:
    """Reading B of ``unknown_order_numbers``: 400 naming the numbers the account lacks."""
    numbers = numbers_of(params)
    if not numbers or not switches.reading_b("unknown_order_numbers"):
        return None
    known = set(
        Order.objects.filter(
            client_id=grant.client_id, seller_id=grant.seller_id, mp_order_number__in=numbers
        ).values_list("mp_order_number", flat=True)
    )
    unknown = [n for n in dict.fromkeys(numbers) if n not in known]
    if not unknown:
        return None
    problem = f"unknown order numbers: {', '.join(unknown)}"
    return validation_error(
        f"invalid query: mp_order_numbers: {problem}", {"mp_order_numbers": problem}
    )
