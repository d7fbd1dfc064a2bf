from django.apps import AppConfig


class AuthApiConfig(AppConfig):
    """No models (its users, tokens and codes are ``records.api_users``): installed to
    register what the reset clears of its memory."""

    name = "sandbox.auth_api"
    # ``sandbox_auth_api`` is the label of the records it once held (records.api_users).
    label = "sandbox_auth"
    verbose_name = "Platform sandbox: Authentication API"

    def ready(self) -> None:
        from sandbox.auth_api import token_waits
        from sandbox.common import resets

        resets.register("auth_api", memory_reset=token_waits.reset)
