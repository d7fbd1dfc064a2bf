"""Mounted at /dashboard/performance/ (namespace ``performance``)."""

from django.urls import path

from marketplace.performance import staff_views

app_name = "performance"

urlpatterns = [
    path("sellers/<int:seller_id>/", staff_views.seller_performance, name="seller"),
    path(
        "sellers/<int:seller_id>/orders/<slug:kind>/",
        staff_views.seller_performance_orders,
        name="seller_orders",
    ),
]
