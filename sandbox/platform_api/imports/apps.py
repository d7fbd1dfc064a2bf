from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "sandbox.platform_api.imports"
    label = "sandbox_imports"
    verbose_name = "Platform sandbox: imports"
    default_auto_field = "django.db.models.BigAutoField"
