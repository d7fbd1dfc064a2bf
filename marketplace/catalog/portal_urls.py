from django.urls import path

from marketplace.catalog import portal_views as views

app_name = "portal_catalog"

urlpatterns = [
    path("", views.listings, name="listings"),
    path("listings/<int:listing_id>/", views.listing_detail, name="listing"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
]
