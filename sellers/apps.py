from django.apps import AppConfig


class SellersConfig(AppConfig):
    """Sellers, their platform connection and the token vault."""

    name = "sellers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the key rotation's receivers for the sellers' own encrypted fields.
        from sellers import key_rotation  # noqa: F401
