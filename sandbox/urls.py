from django.urls import path

from sandbox import control_views, history_seed, inspection_views, oauth_views, order_views
from sandbox.api_php import urls as platform_urls
from sandbox.orders_v2 import urls as v2_urls

urlpatterns = [
    *v2_urls.urlpatterns,
    path("health", control_views.health, name="health"),
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
    path("sandbox/api/reset", control_views.reset, name="sandbox_reset"),
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
    path("sandbox/api/faults", control_views.faults_view, name="sandbox_faults"),
    path("sandbox/api/clock", control_views.clock_view, name="sandbox_clock"),
    path("sandbox/api/rotation", control_views.rotation, name="sandbox_rotation"),
    path("sandbox/api/auto-ship", control_views.auto_ship, name="sandbox_auto_ship"),
    path(
        "sandbox/api/additive-fields",
        control_views.additive_fields,
        name="sandbox_additive_fields",
    ),
    path("sandbox/api/retry-grace", control_views.retry_grace, name="sandbox_retry_grace"),
    path(
        "sandbox/api/orders/<str:mp_order_number>/ship",
        control_views.order_ship,
        name="sandbox_order_ship",
    ),
    path(
        "sandbox/api/orders/<str:mp_order_number>/cancel",
        control_views.order_cancel,
        name="sandbox_order_cancel",
    ),
    path(
        "sandbox/api/orders/<str:mp_order_number>/acknowledge",
        control_views.order_acknowledge,
        name="sandbox_order_acknowledge",
    ),
]

# Issue 12: the Authentication and Platform APIs (/api.php), their control API and pages.
urlpatterns += platform_urls.urlpatterns
