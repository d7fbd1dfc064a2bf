from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """The marketplace's orders and their sync with the platform."""

    name = "marketplace.orders"
    label = "orders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from marketplace.config_checks import production_system_check
        from marketplace.orders import receivers  # noqa: F401 - connects the receivers

        # Production refuses development values (manage.py check, runserver, migrate).
        checks.register(production_system_check)
