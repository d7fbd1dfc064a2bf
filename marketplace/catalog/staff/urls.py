from django.urls import path

from marketplace.catalog.api_access import views as api_access_views
from marketplace.catalog.staff import status_import_views, status_sync_views, views

app_name = "catalog"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("api-access/", api_access_views.api_access, name="api_access"),
    path("api-access/start/", api_access_views.api_access_start, name="api_access_start"),
    path("api-access/finish/", api_access_views.api_access_finish, name="api_access_finish"),
    path("api-access/cancel/", api_access_views.api_access_cancel, name="api_access_cancel"),
    path("api-access/check/", api_access_views.api_access_check, name="api_access_check"),
    path("sellers/<int:seller_id>/", views.seller_catalog, name="seller"),
    path("sellers/<int:seller_id>/link/", views.seller_link, name="seller_link"),
    path("sellers/<int:seller_id>/feed/", views.feed_provision, name="feed_provision"),
    path("sellers/<int:seller_id>/feed/schedule/", views.feed_schedule, name="feed_schedule"),
    path("sellers/<int:seller_id>/feed/run/", views.feed_run, name="feed_run"),
    path("sellers/<int:seller_id>/feed/remove/", views.feed_remove, name="feed_remove"),
    path("sellers/<int:seller_id>/feed/status/", views.feed_status, name="feed_status"),
    path(
        "sellers/<int:seller_id>/credentials/rotate/",
        status_import_views.credentials_rotate,
        name="credentials_rotate",
    ),
    path(
        "sellers/<int:seller_id>/import/",
        status_import_views.import_provision,
        name="import_provision",
    ),
    path(
        "sellers/<int:seller_id>/import/schedule/",
        status_import_views.import_schedule,
        name="import_schedule",
    ),
    path(
        "sellers/<int:seller_id>/import/targets/",
        status_import_views.import_targets,
        name="import_targets",
    ),
    path(
        "sellers/<int:seller_id>/import/status/",
        status_import_views.import_status,
        name="import_status",
    ),
    path(
        "sellers/<int:seller_id>/status-sync/resend/",
        status_sync_views.status_sync_resend,
        name="status_sync_resend",
    ),
    path(
        "sellers/<int:seller_id>/status-sync/retry/",
        status_sync_views.status_sync_retry,
        name="status_sync_retry",
    ),
    path(
        "sellers/<int:seller_id>/status-sync/switch/",
        status_sync_views.status_sync_switch,
        name="status_sync_switch",
    ),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:run_id>/confirm/", views.run_confirm, name="run_confirm"),
    path("listings/<int:listing_id>/", views.listing_detail, name="listing"),
]
