"""Breaches of the contract's rules by a client, counted in memory (cleared by reset).

Kinds:
* ``early_retry``: a seller-scoped request that arrived before the wait a 429/503 gave
  that seller had passed (``retry_watch``).
* ``shipped_while_unfulfilled``: ``PUT /orders/{n}`` moved an order to ``SHIPPED`` while a
  line was not fully shipped + cancelled (``order_views``).
* ``refresh_token_reuse``: a spent refresh token presented again (``grants``).
* ``api_token_headers``: an /api.php call (every one but ``/login``) without both
  ``x-api-key`` and ``Authorization: Bearer``, or with two different tokens in them
  (``records.api_users.callers``; the call is refused 401).
* ``edrts_reset_window``: an EDRTS request from an API user that arrived after a 429 and
  before its ``X-Rate-Limit-Reset`` (``edrts.waits``; answered as usual, not refused).
* ``edrts_record_over_5kb``: an EDRTS record over 5 000 bytes as JSON text in UTF-8 (the
  request is refused 400, nothing applied).
* ``edrts_marketplace_created_product``: an EDRTS update by an API user other than the
  database's owner named an id the database did not have, so a product was created.
* ``return_complete_not_refunded``: ``POST …/returns/{r}/complete`` on a return that is not
  ``REFUNDED`` (nor already ``COMPLETED``); refused 409.
* ``complete_and_errors``: a refund or return both marked complete and reported with errors
  (the second call of the two is refused 409).
* ``return_changed_after_authorization``: a second ``PUT …/returns/{r}`` with a different body
  once the return left ``AWAITING_AUTHORIZATION``; refused 409.
* ``complete_unread``: a refund or return marked complete that the marketplace never read
  (no GET of it, its order's list or a listing holding it) since it reached its state;
  accepted.
* ``date_format``: a date-time sent to the order interface (an order's dates, a listing's
  ``*_after`` filter) in another form than ``YYYY-MM-DDTHH:MM:SSZ`` (``wire_dates``; refused
  under the date_format point's reading A, taken under B).
* ``order_numbers_over_page``: ``GET /orders``, ``/refunds`` or ``/returns`` with more than
  50 ``mp_order_numbers`` (more than one page holds; refused 400 over the cap of the
  ``order_numbers_cap`` reading: 100 under A, 50 under B).
* ``content_query``: a Content API read (``…/raw_data``, ``…/transformed_data``) with a
  ``selector`` outside the sandbox's one reading (``content_api/selectors.py``), a
  ``limit`` not 1 to 1000, an ``offset`` not a whole number or a ``direction`` not ``>``
  or ``<`` (refused 400).

After-sale (returns and refunds; each request is also refused 400):
* ``after_sale_query``: ``GET /refunds`` or ``GET /returns`` with a query parameter the
  listing does not name (``status`` or ``updated_after`` on refunds, say) or a value it does
  not take (a returns ``status`` of ``REJECTED`` under reading A of ``return_refusal``).
* ``return_without_order_number``: ``PUT …/returns/{r}`` without ``mp_order_number`` in the
  body (reading A of ``return_order_number``), or with one other than the path's.
* ``refund_errors_after_correction``: ``POST …/refunds/{id}/errors`` on a refund the seller
  corrected (CREATED again) with exactly the errors that paused its previous version: a
  blind retry of an errors call that judged lines which are no longer there (the call is
  applied, as the platform would: the corrected refund is paused).

The end-to-end tests assert there are none; the inspection API and page show them.
"""

import threading
from collections import deque
from datetime import UTC, datetime

from sandbox.common import clock

EARLY_RETRY = "early_retry"
SHIPPED_WHILE_UNFULFILLED = "shipped_while_unfulfilled"
REFRESH_TOKEN_REUSE = "refresh_token_reuse"
API_TOKEN_HEADERS = "api_token_headers"
EDRTS_RESET_WINDOW = "edrts_reset_window"
EDRTS_RECORD_OVER_5KB = "edrts_record_over_5kb"
EDRTS_MARKETPLACE_CREATED_PRODUCT = "edrts_marketplace_created_product"
RETURN_COMPLETE_NOT_REFUNDED = "return_complete_not_refunded"
COMPLETE_AND_ERRORS = "complete_and_errors"
RETURN_CHANGED_AFTER_AUTHORIZATION = "return_changed_after_authorization"
COMPLETE_UNREAD = "complete_unread"
# After-sale (returns and refunds).
AFTER_SALE_QUERY = "after_sale_query"
RETURN_WITHOUT_ORDER_NUMBER = "return_without_order_number"
DATE_FORMAT = "date_format"
REFUND_ERRORS_AFTER_CORRECTION = "refund_errors_after_correction"
ORDER_NUMBERS_OVER_PAGE = "order_numbers_over_page"
CONTENT_QUERY = "content_query"
KINDS = (
    EARLY_RETRY,
    SHIPPED_WHILE_UNFULFILLED,
    REFRESH_TOKEN_REUSE,
    API_TOKEN_HEADERS,
    EDRTS_RESET_WINDOW,
    EDRTS_RECORD_OVER_5KB,
    EDRTS_MARKETPLACE_CREATED_PRODUCT,
    RETURN_COMPLETE_NOT_REFUNDED,
    COMPLETE_AND_ERRORS,
    RETURN_CHANGED_AFTER_AUTHORIZATION,
    COMPLETE_UNREAD,
    AFTER_SALE_QUERY,
    RETURN_WITHOUT_ORDER_NUMBER,
    DATE_FORMAT,
    REFUND_ERRORS_AFTER_CORRECTION,
    ORDER_NUMBERS_OVER_PAGE,
    CONTENT_QUERY,
)
RECENT_SIZE = 500

_lock = threading.Lock()
_recent: deque[dict] = deque(maxlen=RECENT_SIZE)
_by_kind: dict[str, int] = {}


def violation_record(
    *, kind: str, seller: str, client_id: str, request_id: str, detail: str
) -> None:
    entry = {
        "kind": kind,
        "seller": seller,
        "client_id": client_id,
        "at": datetime.now(UTC).isoformat(),
        "sandbox_at": clock.now().isoformat(),
        "request_id": request_id,
        "detail": detail,
    }
    with _lock:
        _recent.append(entry)
        _by_kind[kind] = _by_kind.get(kind, 0) + 1


def summary(*, limit: int = 100) -> dict:
    """``{"total", "by_kind", "recent"}``, the latest first."""
    with _lock:
        by_kind = {kind: _by_kind.get(kind, 0) for kind in KINDS}
        recent = list(_recent)[-limit:] if limit > 0 else []
    return {"total": sum(by_kind.values()), "by_kind": by_kind, "recent": recent[::-1]}


def reset() -> None:
    with _lock:
        _recent.clear()
        _by_kind.clear()
