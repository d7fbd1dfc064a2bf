from django.apps import AppConfig


class SellersConfig(AppConfig):
    """Sellers, their platform connection and the token vault."""

    name = "sellers"
    default_auto_field = "django.db.models.BigAutoField"
