from django.apps import AppConfig


class SandboxConfig(AppConfig):
    # The label (and so the tables and the migration history) predate the room's package.
    name = "sandbox.order_source"
    label = "sandbox"
    verbose_name = "Platform sandbox"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.order_source import grants, seller_waits
        from sandbox.order_source.models import (
            AuthorizationCode,
            Client,
            ErrorReport,
            Grant,
            Order,
            OrderStateChange,
            Refund,
            Return,
            Seller,
            Token,
        )

        def _memory_reset() -> None:
            grants.counters_reset()
            seller_waits.reset()

        resets.register(
            "order_source",
            data_models=[
                Refund,
                Return,
                ErrorReport,
                OrderStateChange,
                Order,
                Token,
                AuthorizationCode,
                Grant,
            ],
            account_models=[Seller, Client],
            memory_reset=_memory_reset,
        )
