from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The one place that speaks HTTP to the platform, and its call log."""

    name = "marketplace.platform"
    label = "platform"
    default_auto_field = "django.db.models.BigAutoField"
