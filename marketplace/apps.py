from django.apps import AppConfig


class MarketplaceConfig(AppConfig):
    """The project itself: what every process does at start (web, worker, beat, commands)."""

    name = "marketplace"
    label = "marketplace"

    def ready(self) -> None:
        from marketplace.folders import local_folders_create

        local_folders_create()
