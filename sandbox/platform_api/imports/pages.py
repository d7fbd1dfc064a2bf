"""What the sandbox's database page shows of the database's imports."""

from sandbox.platform_api.imports.models import Import
from sandbox.records.databases.models import CatalogDatabase


def imports_with_last_log(*, db: CatalogDatabase) -> list[dict]:
    """Each import with its settings, schedule and last log (None before any run)."""
    return [
        {"import": source, "last_log": source.logs.order_by("-id").first()}
        for source in Import.objects.filter(db=db).order_by("id")
    ]
