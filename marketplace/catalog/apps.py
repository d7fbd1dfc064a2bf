from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "marketplace.catalog"
    label = "catalog"
    verbose_name = "Catalog (platform feeds and listings)"

    def ready(self) -> None:
        # Registers the tasks in every process, so dispatch.py's by-name queueing finds
        # them (and runs them at once when tests set Celery eager).
        from marketplace.catalog import tasks  # noqa: F401
