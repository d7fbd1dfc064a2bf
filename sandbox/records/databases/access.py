"""Which accounts and databases an API user reaches (404 unknown, 403 not theirs)."""

from sandbox.common.api_php.errors import ApiError
from sandbox.records.api_users.models import PlatformAccount, PlatformUser
from sandbox.records.databases.models import CatalogDatabase


def _number(value: str, what: str) -> int:
    # The interface types the ids as numbers: anything else names no record.
    if not value.isdigit():
        raise ApiError(f"{what} not found", 404)
    return int(value)


def account_for_user(*, user: PlatformUser, account_id: str) -> PlatformAccount:
    account = PlatformAccount.objects.filter(id=_number(account_id, "Account")).first()
    if account is None:
        raise ApiError("Account not found", 404)
    if not user.accounts.filter(id=account.id).exists():
        raise ApiError("Access denied to this account", 403)
    return account


def db_for_user(*, user: PlatformUser, db_id: str) -> CatalogDatabase:
    db = CatalogDatabase.objects.filter(id=_number(db_id, "Database")).first()
    if db is None:
        raise ApiError("Database not found", 404)
    if not user.accounts.filter(id=db.account_id).exists():
        raise ApiError("Access denied to this database", 403)
    return db
