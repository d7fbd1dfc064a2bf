from django.apps import AppConfig


class ReturnsConfig(AppConfig):
    """Returns, sellers' refunds, their checks and the refund ledger."""

    name = "marketplace.returns"
    label = "returns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from marketplace.returns.pull_hooks import returns_after_pull, returns_open_reason
        from sellers.pull_schedule import after_pull_register, open_work_check_register

        # Returns and refunds follow the seller's pull schedule (sellers/pull_schedule.py):
        # an undecided return keeps the seller at the short interval, and each pull of the
        # seller lists their returns and refunds when something could be there.
        open_work_check_register("returns", returns_open_reason)
        after_pull_register("returns", returns_after_pull)
