from django.apps import AppConfig


class SellersConfig(AppConfig):
    """Sellers, their platform connection and the token vault."""

    name = "sellers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # key_rotation connects its receivers for the sellers' own encrypted fields; tasks
        # registers the task names services start through ``marketplace.enqueue``.
        from sellers import key_rotation, tasks  # noqa: F401
