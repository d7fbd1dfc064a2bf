from django.urls import path

from marketplace.dashboard import returns_views, views

app_name = "dashboard"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("live/", views.overview_live, name="overview_live"),
    path("sellers/", views.seller_list, name="sellers"),
    path("sellers/<int:seller_id>/", views.seller_detail, name="seller"),
    path("sellers/<int:seller_id>/live/", views.seller_live, name="seller_live"),
    path("sellers/<int:seller_id>/retry-failed/", views.seller_retry_failed, name="seller_retry"),
    path("sellers/<int:seller_id>/refresh/", views.seller_refresh, name="seller_refresh"),
    path("sellers/<int:seller_id>/pull/", views.seller_pull, name="seller_pull"),
    path("sellers/<int:seller_id>/disconnect/", views.seller_disconnect, name="seller_disconnect"),
    path("orders/", views.order_list, name="orders"),
    path("orders/<int:order_id>/", views.order_detail, name="order"),
    path("orders/<int:order_id>/live/", views.order_live, name="order_live"),
    path("orders/<int:order_id>/retry/", views.order_retry, name="order_retry"),
    path("returns/", returns_views.returns_waiting, name="returns"),
    path("returns/steps/<int:step_id>/retry/", returns_views.step_retry, name="return_step_retry"),
    path(
        "returns/problems/<int:problem_id>/retry/",
        returns_views.record_problem_retry_view,
        name="returns_problem_retry",
    ),
]
