"""``GET /api/v2/orders``: the contract's filters, read strictly, and cursor paging.

Sorted by id (an order's id never changes, so paging never skips one; orders imported
meanwhile come at the end). The cursor is ``v2+`` and standard base64: it must be
URL-encoded, like the marketplace-facing listing's.
"""

import base64
import binascii
import json
import re

from django.db.models import Q

from sandbox.orders_v2.dates import strict_datetime

STATES = ("PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED")
SERVICE_STATUSES = ("NEW", "READY", "COMPLETE", "CANCELLED")
LIMIT_DEFAULT, LIMIT_MAX = 50, 100
MAX_LIST_VALUES = 100
PARAMETERS = frozenset(
    {
        "service_status",
        "feedamp_status",  # the public overview's name for service_status
        "normalized_marketplace_state",
        # The reference's further filters (order-v2-contract.md, "beyond this").
        "marketplace_state",
        "marketplace_state_changed_after",
        "marketplace_state_changed_before",
        "imported_after",
        "imported_before",
        "id",
        "marketplace_order_number",
        "merchant_order_number",
        "customer_order_number",
        "integration_id",
        "limit",
        "cursor",
    }
)
_DIGITS = re.compile(r"^[0-9]{1,18}$")
_CURSOR_PREFIX = "v2+"


def cursor_encode(order_id: int) -> str:
    return _CURSOR_PREFIX + base64.b64encode(json.dumps({"after": order_id}).encode()).decode()


def cursor_decode(cursor: str) -> int | None:
    if not cursor.startswith(_CURSOR_PREFIX):
        return None
    try:
        data = json.loads(base64.b64decode(cursor.removeprefix(_CURSOR_PREFIX), validate=True))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    after = data.get("after") if isinstance(data, dict) else None
    return after if isinstance(after, int) and not isinstance(after, bool) else None


def _values(raw: str) -> list[str]:
    return raw.split(",")


def _listed(
    params: dict[str, str], key: str, allowed: tuple[str, ...], problems: dict[str, str]
) -> list[str]:
    values = _values(params[key])
    if any(v not in allowed for v in values):
        problems[key] = f"comma-separated values of {', '.join(allowed)}"
    return values


def listing_filters(params: dict[str, str]) -> tuple[Q, int, dict[str, str]]:
    """(filter, limit, problems) for the query parameters (already checked for unknown or
    repeated names)."""
    problems: dict[str, str] = {}
    query = Q()
    if "service_status" in params and "feedamp_status" in params:
        problems["feedamp_status"] = "give service_status or feedamp_status, not both"
    for key in ("service_status", "feedamp_status"):
        if key in params:
            query &= Q(service_status__in=_listed(params, key, SERVICE_STATUSES, problems))
    # The marketplace's own state is one of the four normalized ones here (the sandbox's
    # marketplace sends those), so both filters read the same column.
    for key in ("normalized_marketplace_state", "marketplace_state"):
        if key in params:
            states = _listed(params, key, STATES, problems)
            query &= Q(normalized_marketplace_state__in=states)
    for key, lookup in (
        ("marketplace_state_changed_after", "marketplace_state_changed_at__gt"),
        ("marketplace_state_changed_before", "marketplace_state_changed_at__lt"),
        ("imported_after", "imported_at__gt"),
        ("imported_before", "imported_at__lt"),
    ):
        if key in params:
            moment = strict_datetime(params[key])
            if moment is None:
                problems[key] = (
                    "RFC 3339 date-time with an offset and no fractional seconds "
                    "(URL-encode the '+')"
                )
            else:
                query &= Q(**{lookup: moment})
    if "id" in params:
        ids = _values(params["id"])
        if any(not _DIGITS.match(i) for i in ids) or len(ids) > MAX_LIST_VALUES:
            problems["id"] = f"comma-separated order ids (digits, at most {MAX_LIST_VALUES})"
        else:
            query &= Q(id__in=[int(i) for i in ids])
    for key, lookup in (
        ("marketplace_order_number", "order__mp_order_number__in"),
        ("merchant_order_number", "merchant_order_number__in"),
        # The number the buyer sees is the marketplace's (serialize.order_json).
        ("customer_order_number", "order__mp_order_number__in"),
        # An integration is the marketplace the order came from (its client id).
        ("integration_id", "order__client__client_id__in"),
    ):
        if key in params:
            values = _values(params[key])
            if any(not v for v in values) or len(values) > MAX_LIST_VALUES:
                problems[key] = f"comma-separated, non-empty values (at most {MAX_LIST_VALUES})"
            query &= Q(**{lookup: values})
    limit = LIMIT_DEFAULT
    if "limit" in params:
        raw = params["limit"]
        limit = int(raw) if _DIGITS.match(raw) else 0
        if not 1 <= limit <= LIMIT_MAX:
            problems["limit"] = f"an integer from 1 to {LIMIT_MAX}"
    if "cursor" in params:
        after = cursor_decode(params["cursor"])
        if after is None:
            problems["cursor"] = "not a cursor this endpoint returned (URL-encode it)"
        else:
            query &= Q(id__gt=after)
    return query, limit, problems
