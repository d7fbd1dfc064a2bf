"""Who may read a seller's listing-status file: the import holding its credentials.

The key names the file (unknown → 404, it reveals nothing: keys are unguessable); the
username and password are compared in constant time against the stored hash.
"""

from __future__ import annotations

import hmac

from django.views.decorators.debug import sensitive_variables

from marketplace.catalog.listing_status.status_file import status_password_hash
from marketplace.catalog.models import StatusImport


class StatusFileUnknown(Exception):
    pass


class StatusFileUnauthorized(Exception):
    pass


@sensitive_variables("password")
def status_import_authenticate(
    *, status_key: str, username: str | None, password: str | None
) -> StatusImport:
    """The import whose file this is, when the credentials are its own."""
    status_import = (
        StatusImport.objects.filter(status_key=status_key)
        .select_related("source")
        .only("id", "username", "password_hash", "source__id", "source__seller_id")
        .first()
    )
    if status_import is None or not status_import.password_hash:
        raise StatusFileUnknown(status_key)
    if username is None or password is None:
        raise StatusFileUnauthorized("no credentials")
    password_ok = hmac.compare_digest(status_password_hash(password), status_import.password_hash)
    user_ok = hmac.compare_digest(username.encode(), status_import.username.encode())
    if not (password_ok and user_ok):
        raise StatusFileUnauthorized("wrong credentials")
    return status_import
