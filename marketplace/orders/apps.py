from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """The marketplace's orders and their sync with the platform."""

    name = "marketplace.orders"
    label = "orders"
    default_auto_field = "django.db.models.BigAutoField"
