from django.apps import AppConfig


class PerformanceConfig(AppConfig):
    """Seller performance: the scorecards' figures, thresholds, crossings and pages."""

    name = "marketplace.performance"
    label = "performance"
    verbose_name = "Seller performance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the tasks in every process, so task_enqueue finds them by name.
        from marketplace.performance import tasks  # noqa: F401
