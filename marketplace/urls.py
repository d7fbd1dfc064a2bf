from django.contrib import admin
from django.urls import include, path

from marketplace import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    # Before "sellers/": the seller's order pages live under the portal's prefix.
    path("sellers/orders/", include("marketplace.orders.portal_urls")),
    path("sellers/", include("sellers.urls")),
    path("dashboard/", include("marketplace.dashboard.urls")),
    path("api/", include("marketplace.orders.urls")),
]
