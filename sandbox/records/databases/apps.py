from django.apps import AppConfig


class DatabasesRecordsConfig(AppConfig):
    # The label (tables, migration history) predates this package: the Platform API's
    # ``catalog`` held it.
    name = "sandbox.records.databases"
    label = "sandbox_catalog"
    verbose_name = "Platform sandbox: databases"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.records.databases.models import CatalogDatabase, CatalogRow

        # A database belongs to its account (like a seller's orders): it goes with them.
        resets.register("records.databases", account_models=[CatalogRow, CatalogDatabase])
