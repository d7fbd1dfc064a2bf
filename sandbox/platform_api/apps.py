from django.apps import AppConfig


class PlatformApiConfig(AppConfig):
    """No models of its own (exports and imports keep theirs): installed for its page
    templates and to register what the reset clears of the Platform API."""

    name = "sandbox.platform_api"
    label = "sandbox_platform_api"
    verbose_name = "Platform sandbox: Platform API"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.platform_api import reset

        resets.register(
            "platform_api",
            data_models=reset.DATA_MODELS,
            memory_reset=reset.memory_reset,
        )
