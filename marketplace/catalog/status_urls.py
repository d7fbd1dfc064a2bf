from django.urls import path

from marketplace.catalog import status_views as views
from marketplace.catalog import url_keys  # noqa: F401 - registers <catalog_key:…>

app_name = "catalog_status"

urlpatterns = [
    path(
        "<catalog_key:status_key>/listing-status.csv", views.listing_status, name="listing_status"
    ),
]
