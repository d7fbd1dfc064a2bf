from django.urls import path

from marketplace.privacy import views

app_name = "privacy"

urlpatterns = [
    path("erase/", views.erase_buyer, name="erase_buyer"),
]
