"""The sandbox's URLs: one ``urls.py`` per room (API group), included here."""

from django.urls import include, path

urlpatterns = [
    path("", include("sandbox.orders_v2.urls")),
    path("", include("sandbox.common.urls")),
    path("", include("sandbox.order_source.urls")),
    path("", include("sandbox.auth_api.urls")),
    path("", include("sandbox.platform_api.urls")),
    path("", include("sandbox.edrts.urls")),
    path("", include("sandbox.content_api.urls")),
]
