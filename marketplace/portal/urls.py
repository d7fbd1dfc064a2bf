"""The seller portal's pages. Each list keeps the URL namespace its pages always had;
marketplace/urls.py mounts them:

- ``home_urlpatterns`` at /sellers/, in the ``sellers`` namespace (``sellers:portal``),
  beside the sign-in and connection pages of ``sellers.urls``;
- ``order_urlpatterns`` at /sellers/orders/ (namespace ``portal``);
- ``catalog_urlpatterns`` at /sellers/catalog/ (namespace ``portal_catalog``).
"""

from django.urls import path

from marketplace.portal import (
    catalog_views,
    order_views,
    returns_history_views,
    returns_views,
    settings_views,
    views,
)

home_urlpatterns = [
    path("", views.home, name="portal"),
    path("pull/", views.pull_now, name="pull_now"),
    path("settings/", settings_views.notification_settings, name="settings"),
]

order_urlpatterns = [
    path("", order_views.order_list, name="orders"),
    path("export.csv", order_views.order_export_csv, name="orders_csv"),
    path("returns/", returns_views.returns, name="returns"),
    path("returns/history/", returns_history_views.returns_history, name="returns_history"),
    path("<int:order_id>/", order_views.order_detail, name="order"),
    path("<int:order_id>/live/", order_views.order_live, name="order_live"),
]

catalog_urlpatterns = [
    path("", catalog_views.listings, name="listings"),
    path("listings/<int:listing_id>/", catalog_views.listing_detail, name="listing"),
    path("runs/<int:run_id>/", catalog_views.run_detail, name="run"),
]
