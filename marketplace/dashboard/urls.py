from django.urls import path

from marketplace.dashboard import action_views, bulk_views, export_views, returns_views, views
from marketplace.reconcile import staff_views as reconcile_views

app_name = "dashboard"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("live/", views.overview_live, name="overview_live"),
    path("sellers/", views.seller_list, name="sellers"),
    path("sellers/bulk/pull/", bulk_views.sellers_pull, name="sellers_bulk_pull"),
    path("sellers/bulk/disconnect/", bulk_views.sellers_disconnect, name="sellers_bulk_disconnect"),
    path("sellers/<int:seller_id>/", views.seller_detail, name="seller"),
    path("sellers/<int:seller_id>/live/", views.seller_live, name="seller_live"),
    path(
        "sellers/<int:seller_id>/retry-failed/",
        action_views.seller_retry_failed,
        name="seller_retry",
    ),
    path("sellers/<int:seller_id>/refresh/", action_views.seller_refresh, name="seller_refresh"),
    path("sellers/<int:seller_id>/pull/", action_views.seller_pull, name="seller_pull"),
    path(
        "sellers/<int:seller_id>/reconcile/",
        reconcile_views.seller_reconcile_now,
        name="seller_reconcile",
    ),
    path("reconcile/", reconcile_views.findings, name="reconcile_findings"),
    path(
        "reconcile/findings/<int:finding_id>/settle/",
        reconcile_views.finding_settle,
        name="reconcile_finding_settle",
    ),
    path(
        "sellers/<int:seller_id>/disconnect/",
        action_views.seller_disconnect,
        name="seller_disconnect",
    ),
    path("orders/", views.order_list, name="orders"),
    path("orders/export.csv", export_views.orders_csv, name="orders_csv"),
    path("orders/bulk/retry/", bulk_views.orders_retry, name="orders_bulk_retry"),
    path("orders/<int:order_id>/", views.order_detail, name="order"),
    path("orders/<int:order_id>/live/", views.order_live, name="order_live"),
    path("orders/<int:order_id>/retry/", action_views.order_retry, name="order_retry"),
    path("returns/", returns_views.returns_waiting, name="returns"),
    path("returns/steps/<int:step_id>/retry/", returns_views.step_retry, name="return_step_retry"),
    path(
        "returns/problems/<int:problem_id>/retry/",
        returns_views.record_problem_retry_view,
        name="returns_problem_retry",
    ),
]
