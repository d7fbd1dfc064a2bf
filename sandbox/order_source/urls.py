"""OAuth and the Order Source API (v1) under /api/v1, their control and inspection API under
/sandbox/api and the state page."""

from django.urls import path

from sandbox.order_source import (
    control_views,
    history_seed,
    inspection_views,
    oauth_views,
    order_views,
    refunds_views,
    returns_views,
)

urlpatterns = [
    # The platform's interface.
    path("api/v1/authorize", oauth_views.authorize, name="authorize"),
    path("api/v1/authorization", oauth_views.authorize, name="authorize"),
    path("api/v1/access_token", oauth_views.access_token, name="access_token"),
    path("api/v1/orders", order_views.orders_list, name="list_orders"),
    path("api/v1/orders/<str:mp_order_number>", order_views.order_detail, name="order"),
    path(
        "api/v1/orders/<str:mp_order_number>/fulfillments",
        order_views.order_fulfillments,
        name="fulfillments",
    ),
    path("api/v1/orders/<str:mp_order_number>/errors", order_views.order_errors, name="errors"),
    # Returns and seller refunds (returns-refunds-contract.md).
    path("api/v1/returns", returns_views.returns_list, name="list_returns"),
    path(
        "api/v1/orders/<str:mp_order_number>/returns",
        returns_views.order_returns,
        name="order_returns",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/returns/<str:mp_return_number>",
        returns_views.return_detail,
        name="return",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/returns/<str:mp_return_number>/refunds",
        returns_views.return_refunds,
        name="return_refunds",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/returns/<str:mp_return_number>/complete",
        returns_views.return_complete,
        name="return_complete",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/returns/<str:mp_return_number>/errors",
        returns_views.return_errors,
        name="return_errors",
    ),
    path("api/v1/refunds", refunds_views.refunds_list, name="list_refunds"),
    path(
        "api/v1/orders/<str:mp_order_number>/refunds",
        refunds_views.order_refunds,
        name="order_refunds",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/refunds/<str:refund_id>",
        refunds_views.refund_detail,
        name="get_refund",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/refunds/<str:refund_id>/complete",
        refunds_views.refund_complete,
        name="refund_complete",
    ),
    path(
        "api/v1/orders/<str:mp_order_number>/refunds/<str:refund_id>/errors",
        refunds_views.refund_errors,
        name="refund_errors",
    ),
    # The simulator's own control and inspection API (local only, no auth).
    path("sandbox/", inspection_views.state_page, name="sandbox_page"),
    path("sandbox/api/state", inspection_views.state, name="sandbox_state"),
    path("sandbox/api/requests", inspection_views.requests_log, name="sandbox_requests"),
    path("sandbox/api/orders", inspection_views.orders, name="sandbox_orders"),
    path("sandbox/api/orders/history", history_seed.order_history, name="sandbox_history"),
    path("sandbox/api/orders/<str:mp_order_number>", inspection_views.order, name="sandbox_order"),
    path("sandbox/api/errors", inspection_views.errors, name="sandbox_errors"),
    path("sandbox/api/grants", inspection_views.grants_view, name="sandbox_grants"),
    path("sandbox/api/violations", inspection_views.violations_view, name="sandbox_violations"),
    path("sandbox/api/clients", control_views.clients, name="sandbox_clients"),
    path("sandbox/api/sellers", control_views.sellers, name="sandbox_sellers"),
    path(
        "sandbox/api/sellers/<str:username>/revoke",
        control_views.seller_revoke,
        name="sandbox_seller_revoke",
    ),
    path("sandbox/api/codes", control_views.codes, name="sandbox_codes"),
    path("sandbox/api/tokens", control_views.tokens, name="sandbox_tokens"),
    path("sandbox/api/tokens/expire", control_views.tokens_expire, name="sandbox_tokens_expire"),
    path("sandbox/api/rotation", control_views.rotation, name="sandbox_rotation"),
]
