from django.urls import path

from marketplace.catalog import status_views as views

app_name = "catalog_status"

urlpatterns = [
    path("<str:status_key>/listing-status.csv", views.listing_status, name="listing_status"),
]
