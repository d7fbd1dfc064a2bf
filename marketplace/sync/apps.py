from django.apps import AppConfig


class SyncConfig(AppConfig):
    """Each seller's pull schedule and pull state; runs the orders and after-sale pulls."""

    name = "marketplace.sync"
    label = "sync"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the task names services start through ``marketplace.enqueue``.
        from marketplace.sync import tasks  # noqa: F401
