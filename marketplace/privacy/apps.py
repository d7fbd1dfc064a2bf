from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "marketplace.privacy"
    label = "privacy"
    default_auto_field = "django.db.models.BigAutoField"
