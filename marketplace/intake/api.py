"""The internal order intake API (django-ninja), mounted at ``/api/intake/``.

Authentication: ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (keys from
``manage.py create_api_key``). Errors, all JSON ``{"detail", "fields": {path: [messages]}}``
(``fields`` empty when no field is at fault): 400 bad input or a body that is not JSON
(nothing is stored), 401 no or a wrong key, 404 unknown order or path, 405 a method the
path does not take, 409 illegal transition or an existing order number with a different
body, 413 a body over the size limit (``DATA_UPLOAD_MAX_MEMORY_SIZE``).

Text fields refuse control (Unicode Cc), format (Cf: zero-width, bidi) and line/paragraph
separator (Zl, Zp) characters (``delivery_notes`` may hold tabs and line breaks);
``currency`` is an ISO 4217 currency, not a metal, fund, test or "no currency" code.
OpenAPI: ``/api/intake/openapi.json``, docs at ``/api/intake/docs``.
"""

from __future__ import annotations

from ninja import NinjaAPI

from marketplace.orders.api import orders_router
from marketplace.orders.errors import DuplicateOrderConflict
from marketplace.orders.intake_http import BearerKey, HeaderKey, intake_errors_install
from marketplace.returns import api as returns_api
from marketplace.returns.errors import ReturnConflict


def intake_api_build() -> NinjaAPI:
    """The intake API: the order routes (shown with the order's returns), the return
    routes, one sign-in and one error shape for all of them. Built once, by ``urls.py``'s
    import; every route it serves is named here."""
    api = NinjaAPI(
        title="Marketplace order intake",
        version="1.0.0",
        description=__doc__,
        urls_namespace="intake",
        auth=[BearerKey(), HeaderKey()],
    )
    intake_errors_install(api, conflicts=(DuplicateOrderConflict, ReturnConflict))
    api.add_router("", orders_router(order_returns=returns_api.order_returns_out))
    api.add_router("", returns_api.router)
    return api
