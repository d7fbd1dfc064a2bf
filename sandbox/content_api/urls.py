"""The Content API under /api.php (the Platform API's base)."""

from django.urls import path

from sandbox.content_api import views

urlpatterns = [
    path("api.php/dbs/<str:db_id>/raw_data", views.data_rows, name="content_raw_data"),
    path(
        "api.php/dbs/<str:db_id>/transformed_data",
        views.data_rows,
        name="content_transformed_data",
    ),
]
