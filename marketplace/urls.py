from django.contrib import admin
from django.urls import include, path

from marketplace import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("sellers/", include("sellers.urls")),
    path("dashboard/", include("marketplace.dashboard.urls")),
    path("api/", include("marketplace.orders.urls")),
]
