from django.apps import AppConfig


class OrderSourceConfig(AppConfig):
    """No models (its orders, grants, returns and refunds are ``records.orders``, which
    kept the label ``sandbox``): installed for its templates and its memory reset."""

    name = "sandbox.order_source"
    label = "sandbox_order_source"
    verbose_name = "Platform sandbox: Order Source API"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.order_source import grants, seller_waits

        def _memory_reset() -> None:
            grants.counters_reset()
            seller_waits.reset()

        resets.register("order_source", memory_reset=_memory_reset)
