from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """The marketplace's orders and their sync with the platform."""

    name = "marketplace.orders"
    label = "orders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks are started by name (marketplace.enqueue): registered in every process.
        from marketplace.orders import tasks  # noqa: F401
