from django.urls import path

from sellers import views

# The portal's home (sellers:portal, at /sellers/) joins this namespace in marketplace/urls.py.
app_name = "sellers"

urlpatterns = [
    path("login/", views.SellerLoginView.as_view(), name="login"),
    path("logout/", views.SellerLogoutView.as_view(), name="logout"),
    path("connection/", views.connection, name="connection"),
    path("connection/connect/", views.connection_connect, name="connect"),
    # settings.PLATFORM_REDIRECT_URL points here; the path is registered at the platform.
    path("connection/callback/", views.connection_callback, name="callback"),
    path("connection/disconnect/", views.connection_disconnect, name="disconnect"),
]
