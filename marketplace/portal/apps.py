from django.apps import AppConfig


class PortalConfig(AppConfig):
    """The seller portal: the seller's own pages (home, orders, catalog) and their reads."""

    name = "marketplace.portal"
    label = "portal"
    default_auto_field = "django.db.models.BigAutoField"
