"""The order intake API under ``/api/intake/`` (OpenAPI at ``/api/intake/openapi.json``)."""

from django.urls import path

from marketplace.orders.api import api

urlpatterns = [
    path("intake/", api.urls),
]
