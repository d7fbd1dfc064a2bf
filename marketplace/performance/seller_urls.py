"""Mounted at /sellers/performance/ (namespace ``portal_performance``)."""

from django.urls import path

from marketplace.performance import seller_views

app_name = "portal_performance"

urlpatterns = [
    path("", seller_views.performance, name="performance"),
    path("orders/<slug:kind>/", seller_views.performance_orders, name="orders"),
]
