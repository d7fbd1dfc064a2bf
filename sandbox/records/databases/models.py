"""A seller's databases and their product rows (every value a string, as the platform's)."""

from django.db import models

from sandbox.records.api_users.models import PlatformAccount, PlatformUser


class CatalogDatabase(models.Model):
    account = models.ForeignKey(PlatformAccount, on_delete=models.CASCADE, related_name="dbs")
    name = models.CharField(max_length=200)
    # The database's fields, in order (rows may leave any of them empty).
    fields = models.JSONField(default=list)
    # The seller's own API user, when known: any other API user writing to the database
    # (through EDRTS) is a marketplace, which must not create products there.
    owner = models.ForeignKey(
        PlatformUser, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_dbs"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class CatalogRow(models.Model):
    db = models.ForeignKey(CatalogDatabase, on_delete=models.CASCADE, related_name="rows")
    # The row's ``id`` value (what row changes address); not unique: a row may lack one.
    key = models.CharField(max_length=200, blank=True)
    data = models.JSONField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["db", "key"], name="sbx_catalog_row_key")]

    def __str__(self) -> str:
        return f"row {self.key or self.id}"
