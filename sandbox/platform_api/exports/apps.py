from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "sandbox.platform_api.exports"
    label = "sandbox_exports"
    verbose_name = "Platform sandbox: exports"
    default_auto_field = "django.db.models.BigAutoField"
