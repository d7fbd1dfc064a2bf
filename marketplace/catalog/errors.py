"""Errors of the catalog services, with messages fit for staff pages."""

from __future__ import annotations


class CatalogError(Exception):
    """A catalog action could not be done; ``str(exc)`` says why, for people."""


class ApiAccessNeeded(CatalogError):
    """The marketplace's API user is not signed in (or the platform stopped accepting its
    token): catalog work waits until staff sign in again."""


class FeedNotSetUp(CatalogError):
    pass
