from django.urls import path

from marketplace.catalog import url_keys  # noqa: F401 - registers <catalog_key:…>
from marketplace.catalog.feeds import views

app_name = "catalog_feeds"

urlpatterns = [
    path("<catalog_key:feed_key>/", views.folder, name="receive_folder"),
    path("<catalog_key:feed_key>/<str:file_name>", views.receive, name="receive"),
]
