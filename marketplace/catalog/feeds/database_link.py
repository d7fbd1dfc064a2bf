"""Which platform account and database feed each seller's catalog (staff set it)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.errors import CatalogError
from marketplace.catalog.models import CatalogSource
from marketplace.platform.auth_api import PlatformAccount, PlatformDatabase
from marketplace.platform.errors import PlatformError


def platform_accounts_list() -> list[PlatformAccount]:
    try:
        with platform_api() as api:
            return api.auth.accounts()
    except PlatformError as exc:
        raise CatalogError(f"The platform did not list the accounts: {exc}") from exc


def platform_databases_list(*, account_id: str) -> list[PlatformDatabase]:
    try:
        with platform_api() as api:
            return api.auth.databases(account_id=account_id)
    except PlatformError as exc:
        raise CatalogError(f"The platform did not list the account's databases: {exc}") from exc
    except ValueError as exc:  # "", "." or "..": never a path segment (db_resources.segment)
        raise CatalogError("That is not a platform account id.") from exc


def seller_database_link(*, seller: Any, account_id: str, db_id: str, actor: Any) -> CatalogSource:
    """Link the seller to a database of an account, both checked against the platform."""
    accounts = {account.id: account for account in platform_accounts_list()}
    account = accounts.get(str(account_id))
    if account is None:
        raise CatalogError("The API user cannot reach that platform account.")
    databases = {db.id: db for db in platform_databases_list(account_id=account.id)}
    database = databases.get(str(db_id))
    if database is None:
        raise CatalogError("That database is not in the chosen account.")
    source = CatalogSource.objects.filter(seller=seller).first()
    if source is not None and source.has_feed and source.db_id != database.id:
        raise CatalogError(
            "This seller's feed reads another database: remove the feed before relinking."
        )
    if source is None:
        source = CatalogSource(seller=seller)
    source.account_id = account.id
    source.account_name = account.name
    source.db_id = database.id
    source.db_name = database.name
    source.linked_at = timezone.now()
    source.linked_by = actor
    source.save()
    return source
