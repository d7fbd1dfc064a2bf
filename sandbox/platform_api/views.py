"""The Platform API's databases of an account: ``GET /api.php/accounts/<id>/dbs``."""

from django.http import HttpRequest, HttpResponse

from sandbox.common.api_php.endpoint import strings_response
from sandbox.platform_api.endpoint import platform_endpoint
from sandbox.platform_api.exports.models import ExportRun
from sandbox.platform_api.imports.models import Import
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.access import account_for_user
from sandbox.records.databases.models import CatalogDatabase


def _db_json(db: CatalogDatabase) -> dict:
    latest = ExportRun.objects.filter(export__db=db).order_by("-id").first()
    latest_import = (
        Import.objects.filter(db=db, last_run_at__isnull=False).order_by("-last_run_at").first()
    )
    return {
        "id": str(db.id),
        "name": db.name,
        # Our choice: the status of the database's latest export run and of the import run
        # started last ("none" before any).
        "import_status": latest_import.status if latest_import else "none",
        "export_status": latest.status if latest else "none",
    }


@platform_endpoint(group="accounts", methods=("GET",))
def account_dbs(request: HttpRequest, user: PlatformUser, account_id: str) -> HttpResponse:
    account = account_for_user(user=user, account_id=account_id)
    return strings_response([_db_json(db) for db in account.dbs.order_by("id")])
