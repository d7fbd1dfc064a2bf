"""The seller's own orders, mounted at /sellers/orders/ (see marketplace/urls.py)."""

from django.urls import path

from marketplace.orders import portal_views

app_name = "portal"

urlpatterns = [
    path("", portal_views.order_list, name="orders"),
    path("<int:order_id>/", portal_views.order_detail, name="order"),
    path("<int:order_id>/live/", portal_views.order_live, name="order_live"),
]
