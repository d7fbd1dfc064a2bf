from django.urls import path

from marketplace.catalog import receive_views as views

app_name = "catalog_feeds"

urlpatterns = [
    path("<str:feed_key>/", views.folder, name="receive_folder"),
    path("<str:feed_key>/<str:file_name>", views.receive, name="receive"),
]
