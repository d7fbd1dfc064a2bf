from django.urls import path

from sandbox.orders_v2 import (
    after_sale_views,
    control_views,
    drift_views,
    page_views,
    refund_pages,
    views,
)

api_urlpatterns = [
    # The seller-side order host's token call sits on its version-1 path (the contract).
    path("api/v1/get_token", views.get_token, name="get_token"),
    path("api/v2/orders", views.orders_list, name="v2_list_orders"),
    path("api/v2/orders/<str:order_id>", views.order_detail, name="v2_order"),
    path("api/v2/orders/<str:order_id>/confirm", views.order_confirm, name="v2_confirm"),
    path(
        "api/v2/orders/<str:order_id>/run-operation",
        views.order_operation,
        name="v2_order_operation",
    ),
    path("api/v2/orders/<str:order_id>/fulfillments", views.fulfillments, name="v2_fulfillments"),
    path(
        "api/v2/orders/<str:order_id>/fulfillments/<str:fulfillment_id>",
        views.fulfillment,
        name="v2_fulfillment",
    ),
    path(
        "api/v2/orders/<str:order_id>/cancellations", views.cancellations, name="v2_cancellations"
    ),
    path(
        "api/v2/orders/<str:order_id>/cancellations/<str:cancellation_id>",
        views.cancellation,
        name="v2_cancellation",
    ),
    # Returns and seller refunds.
    path("api/v2/orders/<str:order_id>/refunds", after_sale_views.order_refunds, name="v2_refunds"),
    path(
        "api/v2/orders/<str:order_id>/refunds/<str:refund_id>",
        after_sale_views.order_refund,
        name="v2_refund",
    ),
    path("api/v2/returns", after_sale_views.returns_list, name="v2_returns"),
    path("api/v2/returns/<str:return_id>", after_sale_views.return_detail, name="v2_return"),
    path(
        "api/v2/returns/<str:return_id>/refunds",
        after_sale_views.return_refund,
        name="v2_return_refund",
    ),
    path(
        "api/v2/returns/<str:return_id>/run-operation",
        after_sale_views.return_operation,
        name="v2_return_operation",
    ),
]

control_urlpatterns = [
    path("sandbox/api/v2/api-users", control_views.api_users, name="sandbox_v2_api_users"),
    path("sandbox/api/v2/orders", control_views.orders_view, name="sandbox_v2_orders"),
    path(
        "sandbox/api/v2/sellers/<str:username>/settings",
        control_views.seller_settings_view,
        name="sandbox_v2_settings",
    ),
    path(
        "sandbox/api/v2/sellers/<str:username>/import",
        control_views.seller_import_view,
        name="sandbox_v2_import",
    ),
    path(
        "sandbox/api/v2/sellers/<str:username>/simulator",
        control_views.simulator_view,
        name="sandbox_v2_simulator",
    ),
    # Playing the seller by hand: the same v2 operations as the v2 API.
    path("sandbox/api/auto-ship", control_views.auto_ship, name="sandbox_auto_ship"),
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
    path(
        "sandbox/api/orders/<str:mp_order_number>/returns/<str:mp_return_number>/<str:op>",
        control_views.return_operation,
        name="sandbox_return_operation",
    ),
    path(
        "sandbox/api/orders/<str:mp_order_number>/refunds",
        control_views.order_refund,
        name="sandbox_order_refund",
    ),
    # Drift: changes made at the platform elsewhere, unseen by seller_updated_after.
    path(
        "sandbox/api/orders/<str:mp_order_number>/drift",
        drift_views.order_drift,
        name="sandbox_order_drift",
    ),
    path("sandbox/api/drift", drift_views.drift_events, name="sandbox_drift"),
    path("sandbox/api/returns", control_views.returns_view, name="sandbox_returns"),
    path("sandbox/api/refunds", control_views.refunds_view, name="sandbox_refunds"),
    path(
        "sandbox/api/refunds/<str:refund_id>/resolve",
        control_views.refund_resolve,
        name="sandbox_refund_resolve",
    ),
]

page_urlpatterns = [
    path("sandbox/v2/", page_views.sellers_page, name="sandbox_v2_page"),
    path("sandbox/v2/sellers/<str:username>/", page_views.seller_page, name="sandbox_v2_seller"),
    path(
        "sandbox/v2/sellers/<str:username>/settings",
        page_views.seller_settings_post,
        name="sandbox_v2_seller_settings",
    ),
    path(
        "sandbox/v2/sellers/<str:username>/import",
        page_views.seller_import_post,
        name="sandbox_v2_seller_import",
    ),
    path(
        "sandbox/v2/sellers/<str:username>/simulator",
        page_views.simulator_post,
        name="sandbox_v2_seller_simulator",
    ),
    path("sandbox/v2/orders/<int:order_id>/", page_views.order_page, name="sandbox_v2_order"),
    path(
        "sandbox/v2/orders/by-number/<str:mp_order_number>/",
        page_views.order_by_number_page,
        name="sandbox_v2_order_by_number",
    ),
    path(
        "sandbox/v2/orders/<int:order_id>/packages/<int:package_id>/correct",
        page_views.package_correct_post,
        name="sandbox_v2_package_correct",
    ),
    path(
        "sandbox/v2/orders/<int:order_id>/packages/<int:package_id>/delete",
        page_views.package_delete_post,
        name="sandbox_v2_package_delete",
    ),
    path("sandbox/v2/orders/<int:order_id>/ship", page_views.ship_post, name="sandbox_v2_ship"),
    path(
        "sandbox/v2/orders/<int:order_id>/cancel", page_views.cancel_post, name="sandbox_v2_cancel"
    ),
    path(
        "sandbox/v2/orders/<int:order_id>/returns/<int:return_id>/<str:op>",
        page_views.return_operation_post,
        name="sandbox_v2_return_operation",
    ),
    path(
        "sandbox/v2/orders/<int:order_id>/refunds", page_views.refund_post, name="sandbox_v2_refund"
    ),
    path(
        "sandbox/v2/orders/<int:order_id>/refunds/<int:refund_id>/resolve",
        refund_pages.refund_resolve_post,
        name="sandbox_v2_refund_resolve",
    ),
]

urlpatterns = api_urlpatterns + control_urlpatterns + page_urlpatterns
