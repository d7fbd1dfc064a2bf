from django.apps import AppConfig


class MarketplaceConfig(AppConfig):
    """The project itself: what every process does at start (web, worker, beat, commands)."""

    name = "marketplace"
    label = "marketplace"

    def ready(self) -> None:
        from django.core import checks

        from marketplace.config_checks import production_system_check
        from marketplace.folders import local_folders_create

        # Production refuses development values (manage.py check, runserver, migrate).
        checks.register(production_system_check)
        local_folders_create()
