from django.apps import AppConfig


class OrdersV2Config(AppConfig):
    name = "sandbox.orders_v2"
    label = "sandbox_orders_v2"
    verbose_name = "Platform sandbox: order API v2"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.orders_v2 import reset, sim_settings
        from sandbox.orders_v2.imports import marketplace_state_changed
        from sandbox.records.orders import state_changes

        resets.register(
            "orders_v2",
            data_models=reset.ORDER_MODELS,
            account_models=reset.ACCOUNT_MODELS,
            memory_reset=sim_settings.reset,
        )
        state_changes.listen("orders_v2", marketplace_state_changed)
