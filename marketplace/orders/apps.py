from django.apps import AppConfig


class OrdersConfig(AppConfig):
    """The marketplace's orders and their sync with the platform."""

    name = "marketplace.orders"
    label = "orders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from marketplace.orders import receivers  # noqa: F401 - connects the receivers
        from marketplace.orders.selectors import seller_open_orders_reason
        from sellers.pull_schedule import open_work_check_register

        # A seller with unsettled orders is pulled at the short interval (returns and
        # refunds register their own rule the same way).
        open_work_check_register("orders", seller_open_orders_reason)
