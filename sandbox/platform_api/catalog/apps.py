from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "sandbox.platform_api.catalog"
    label = "sandbox_catalog"
    verbose_name = "Platform sandbox: catalog"
    default_auto_field = "django.db.models.BigAutoField"
