from django.apps import AppConfig


class AuthApiConfig(AppConfig):
    name = "sandbox.auth_api"
    label = "sandbox_auth_api"
    verbose_name = "Platform sandbox: auth_api"
    default_auto_field = "django.db.models.BigAutoField"
