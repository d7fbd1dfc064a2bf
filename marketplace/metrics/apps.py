from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """Metrics for operators (no models: it reads the other apps' tables)."""

    name = "marketplace.metrics"
    label = "metrics"
    default_auto_field = "django.db.models.BigAutoField"
