from django.contrib import admin
from django.urls import include, path

from marketplace import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    # Before "sellers/": the seller's order pages live under the portal's prefix.
    path("sellers/orders/", include("marketplace.orders.portal_urls")),
    path("sellers/catalog/", include("marketplace.catalog.portal_urls")),
    path("sellers/", include("sellers.urls")),
    path("dashboard/catalog/", include("marketplace.catalog.staff_urls")),
    path("dashboard/", include("marketplace.dashboard.urls")),
    # The platform delivers catalog feed files here (HTTP Basic, per-seller credentials).
    path("catalog/feeds/", include("marketplace.catalog.feed_urls")),
    # The platform's import fetches each seller's listing-status file here (HTTP Basic).
    path("catalog/status/", include("marketplace.catalog.status_urls")),
    path("api/", include("marketplace.orders.urls")),
]
