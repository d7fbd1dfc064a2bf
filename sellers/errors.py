"""Errors the sellers app raises to other parts of the system (orders sync, views, tasks)."""

from __future__ import annotations


class SellerConnectionError(Exception):
    """Base class for problems with a seller's platform connection."""


class ConnectionNotLive(SellerConnectionError):
    """The connection is not connected (never connected, disconnected or needs re-authorization).

    Work for this seller must wait for a (re)connect; the sync's next beat tick picks the
    reconnect up (``marketplace/sync/connect.py``).
    """


class ReauthorizationRequired(ConnectionNotLive):
    """The platform refused the grant (invalid_grant, 401, lapsed refresh token)."""


class TokenRefreshUnavailable(SellerConnectionError):
    """The refresh could not be done now (5xx, 429, timeout, odd answer): try again later.

    The grant is unchanged. ``retry_after`` (seconds) is the platform's hint when it gave one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class VaultError(SellerConnectionError):
    """A stored token cannot be decrypted with any configured key (keys misconfigured)."""


class OAuthStateInvalid(SellerConnectionError):
    """The callback's ``state`` is missing, unknown, expired, replayed or not this seller's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AuthorizationFailed(SellerConnectionError):
    """The platform did not give us a grant (seller denied, platform error, bad token answer)."""

    def __init__(self, reason: str, *, denied: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.denied = denied
