from django.apps import AppConfig


class ReturnsConfig(AppConfig):
    """Returns, sellers' refunds, their checks and the refund ledger."""

    name = "marketplace.returns"
    label = "returns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Adds the return routes to the intake API (``orders.api``) before its URLs and
        # OpenAPI document are built: orders sits below returns and cannot import it.
        from marketplace.returns import api  # noqa: F401
