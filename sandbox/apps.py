from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "sandbox"
    label = "sandbox"
    verbose_name = "Platform sandbox"
    default_auto_field = "django.db.models.BigAutoField"
