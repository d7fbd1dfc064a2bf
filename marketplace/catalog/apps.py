from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "marketplace.catalog"
    label = "catalog"
    verbose_name = "Catalog (platform feeds and listings)"
