from django.apps import AppConfig


class OrdersRecordsConfig(AppConfig):
    # The label (and so the tables and the migration history) predate this package: the
    # models lived in ``order_source`` under the label ``sandbox``.
    name = "sandbox.records.orders"
    label = "sandbox"
    verbose_name = "Platform sandbox: orders, returns and refunds"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.records.orders.models import (
            AuthorizationCode,
            Client,
            DriftEvent,
            ErrorReport,
            Grant,
            Order,
            OrderStateChange,
            Refund,
            Return,
            Seller,
            Token,
        )

        resets.register(
            "records.orders",
            data_models=[
                DriftEvent,
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
        )
