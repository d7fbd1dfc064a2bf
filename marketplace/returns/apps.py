from django.apps import AppConfig


class ReturnsConfig(AppConfig):
    """Returns, sellers' refunds, their checks and the refund ledger."""

    name = "marketplace.returns"
    label = "returns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks are started by name (marketplace.enqueue): registered in every process.
        from marketplace.returns import tasks  # noqa: F401
