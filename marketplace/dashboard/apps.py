from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The staff dashboard."""

    name = "marketplace.dashboard"
    label = "dashboard"
    default_auto_field = "django.db.models.BigAutoField"
