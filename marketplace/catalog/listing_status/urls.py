from django.urls import path

from marketplace.catalog import url_keys  # noqa: F401 - registers <catalog_key:…>
from marketplace.catalog.listing_status import views

app_name = "catalog_status"

urlpatterns = [
    path(
        "<catalog_key:status_key>/listing-status.csv", views.listing_status, name="listing_status"
    ),
]
