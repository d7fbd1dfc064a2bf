from django.contrib import admin
from django.urls import include, path

from marketplace import views
from marketplace.metrics import views as metrics_views
from marketplace.portal import urls as portal_urls
from sellers import urls as sellers_urls

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    # Prometheus's scrape: a bearer token (METRICS_TOKEN), 404 while none is configured.
    path("metrics", metrics_views.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    # Before "sellers/": the seller's order and catalog pages live under its prefix.
    path("sellers/orders/", include((portal_urls.order_urlpatterns, "portal"))),
    path("sellers/catalog/", include((portal_urls.catalog_urlpatterns, "portal_catalog"))),
    path("sellers/performance/", include("marketplace.performance.seller_urls")),
    # The portal's home keeps its name sellers:portal: one namespace is one include, so
    # it joins the sign-in and connection pages of the sellers app here.
    path(
        "sellers/",
        include(([*portal_urls.home_urlpatterns, *sellers_urls.urlpatterns], "sellers")),
    ),
    path("dashboard/catalog/", include("marketplace.catalog.staff.urls")),
    path("dashboard/privacy/", include("marketplace.privacy.urls")),
    path("dashboard/performance/", include("marketplace.performance.staff_urls")),
    path("dashboard/", include("marketplace.dashboard.urls")),
    # The platform delivers catalog feed files here (HTTP Basic, per-seller credentials).
    path("catalog/feeds/", include("marketplace.catalog.feeds.urls")),
    # The platform's import fetches each seller's listing-status file here (HTTP Basic).
    path("catalog/status/", include("marketplace.catalog.listing_status.urls")),
    path("api/", include("marketplace.intake.urls")),
]
