from django.apps import AppConfig


class OrdersV2Config(AppConfig):
    name = "sandbox.orders_v2"
    label = "sandbox_orders_v2"
    verbose_name = "Platform sandbox: order API v2"
    default_auto_field = "django.db.models.BigAutoField"
