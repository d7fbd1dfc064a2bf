"""Rotating a seller's credentials: the feed's (the platform delivers the feed with them)
and the listing-status file's (the platform's import fetches the file with them) rotate
together, in one staff action.

Each new password reaches the platform before its hash replaces the old one here, so a
refused update leaves the working credentials in place; the platform's message is kept
on the record whose update failed.
"""

from __future__ import annotations

import secrets

from django.views.decorators.debug import sensitive_variables

from marketplace.catalog import provisioned
from marketplace.catalog.errors import FeedNotSetUp
from marketplace.catalog.feeds import provision
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.listing_status.status_file import status_password_hash
from marketplace.catalog.models import CatalogSource


@sensitive_variables("feed_password", "status_password")
def catalog_credentials_rotate(*, source: CatalogSource) -> CatalogSource:
    """New passwords for the feed and, when set up, the status file. Raises
    ``CatalogError`` (with the platform's words) when either update was refused."""
    if not source.has_feed:
        raise FeedNotSetUp("This seller has no feed yet.")
    feed_password = secrets.token_urlsafe(32)
    provisioned.credentials_put(
        provision.EXPORT,
        record=source,
        object_id=source.export_id,
        username=source.feed_username,
        password=feed_password,
        what="the feed",
        prefix="Rotating the feed's credentials failed",
    )
    source.feed_password_hash = provision.feed_password_hash(feed_password)
    provision.clear_error(source)
    source.save()

    status_import = join_import.status_import_of(source)
    if not status_import.is_active:
        return source
    status_password = secrets.token_urlsafe(32)
    provisioned.credentials_put(
        join_import.IMPORT,
        record=status_import,
        object_id=status_import.import_id,
        username=status_import.username,
        password=status_password,
        what="the status file",
        prefix="Rotating the status file's credentials failed",
    )
    status_import.password_hash = status_password_hash(status_password)
    join_import.import_error_clear(status_import)
    status_import.save()
    return source
