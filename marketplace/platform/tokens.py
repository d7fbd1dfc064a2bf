"""Where the order client gets a seller's access token: a ``TokenSource``.

The platform package knows nothing of sellers, connections or the token vault. Whoever
builds an order client hands it a token source (``sellers.token_source.ConnectionTokens``
reads and refreshes a connection's grant under its row lock).
"""

from __future__ import annotations

from typing import Protocol


class TokenSource(Protocol):
    """One grant's access token, as the order client needs it."""

    def access_token(self) -> str:
        """A current access token (refreshed first when it is about to expire).

        Raises whatever the owner of the grant raises when there is none to give
        (e.g. the connection is not live).
        """
        ...

    def refresh_after_unauthorized(self, *, rejected_token: str) -> None:
        """The platform answered 401 to ``rejected_token``: renew the grant unless another
        caller already replaced that token. Raises when the grant is gone for good."""
        ...
