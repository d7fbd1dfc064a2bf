"""Sellers, their platform connection (the encrypted grant) and its audit trail."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from sellers import vault


class Seller(models.Model):
    """A marketplace seller: a Django user with a seller profile."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="seller"
    )
    display_name = models.CharField(max_length=200)
    platform_username = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["display_name", "id"]
        # The dashboard's sellers list pages in this order: an index scan, not a sort.
        indexes = [models.Index(fields=["display_name", "id"], name="seller_name_idx")]

    def __str__(self) -> str:
        return self.display_name


# What a page shows for a token the configured keys cannot decrypt.
UNDECRYPTABLE = "(cannot be decrypted)"


class PlatformConnection(models.Model):
    """One seller's grant at the platform. At most one per seller, updated in place.

    Tokens are stored only as Fernet ciphertext (see ``sellers.vault``); read them through
    the ``access_token`` / ``refresh_token`` properties. Every change of the grant (connect,
    refresh, disconnect, loss) bumps ``generation``, so a caller can tell whether the
    token it holds is still the current one.
    """

    class State(models.TextChoices):
        NOT_CONNECTED = "not_connected", "Not connected"
        CONNECTED = "connected", "Connected"
        NEEDS_REAUTH = "needs_reauth", "Needs re-authorization"
        DISCONNECTED = "disconnected", "Disconnected"

    seller = models.OneToOneField(Seller, on_delete=models.CASCADE, related_name="connection")
    state = models.CharField(max_length=20, choices=State.choices, default=State.NOT_CONNECTED)
    # Fernet ciphertext (URL-safe base64 text); empty when there is no grant.
    access_token_ciphertext = vault.EncryptedTextField(blank=True, default="", editable=False)
    refresh_token_ciphertext = vault.EncryptedTextField(blank=True, default="", editable=False)
    access_token_expires_at = models.DateTimeField(null=True, blank=True)
    refresh_token_expires_at = models.DateTimeField(null=True, blank=True)
    connected_at = models.DateTimeField(null=True, blank=True)
    last_refreshed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    generation = models.PositiveIntegerField(default=0)
    # Set when the sweep queued a refresh, cleared by a refresh; the sweep re-queues a
    # connection whose marker is old (a lost message must not strand it).
    refresh_queued_at = models.DateTimeField(null=True, blank=True)
    # Refresh-token expiry warnings already sent (each once per refresh token).
    refresh_warning_30d_sent_at = models.DateTimeField(null=True, blank=True)
    refresh_warning_7d_sent_at = models.DateTimeField(null=True, blank=True)
    refresh_warning_1d_sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["state"], name="conn_state_idx"),
            # The sync's tick looks for connects not started yet: recent ones only, through
            # this index, not every connection (marketplace/sync/connect.py).
            models.Index(fields=["connected_at"], name="conn_connected_at_idx"),
            # The beat sweeps ask "connected and expiring before T, soonest first": state
            # first, then the expiry, so one index range scan answers them in order.
            models.Index(
                fields=["state", "access_token_expires_at"], name="conn_access_expiry_idx"
            ),
            models.Index(
                fields=["state", "refresh_token_expires_at"], name="conn_refresh_expiry_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.seller_id}: {self.get_state_display()}"

    def __repr__(self) -> str:
        return f"<PlatformConnection id={self.pk} seller={self.seller_id} state={self.state}>"

    # --- the vault's view of the grant; never form fields, never rendered -------------
    @property
    def has_tokens(self) -> bool:
        return bool(self.access_token_ciphertext and self.refresh_token_ciphertext)

    @property
    def is_live(self) -> bool:
        return self.state == self.State.CONNECTED and self.has_tokens

    @property
    def access_token(self) -> str:
        return vault.token_decrypt(self.access_token_ciphertext)

    @property
    def refresh_token(self) -> str:
        return vault.token_decrypt(self.refresh_token_ciphertext)

    @property
    def tokens_decryptable(self) -> bool:
        """False when a stored token cannot be decrypted with the configured keys (a key
        lost or removed too early): the grant is unusable, the seller must reconnect."""
        return vault.token_decryptable(self.access_token_ciphertext) and vault.token_decryptable(
            self.refresh_token_ciphertext
        )

    @property
    def access_token_fingerprint(self) -> str:
        """A short, non-reversible tag for admin and logs (sha256 prefix of the token)."""
        if not self.access_token_ciphertext:
            return ""
        if not vault.token_decryptable(self.access_token_ciphertext):
            return UNDECRYPTABLE
        return vault.token_fingerprint(self.access_token)

    @property
    def refresh_token_fingerprint(self) -> str:
        if not self.refresh_token_ciphertext:
            return ""
        if not vault.token_decryptable(self.refresh_token_ciphertext):
            return UNDECRYPTABLE
        return vault.token_fingerprint(self.refresh_token)

    def tokens_set(self, *, access_token: str, refresh_token: str) -> None:
        """Encrypt and hold both tokens on this instance (the caller saves)."""
        self.access_token_ciphertext = vault.token_encrypt(access_token)
        self.refresh_token_ciphertext = vault.token_encrypt(refresh_token)

    def tokens_wipe(self) -> None:
        self.access_token_ciphertext = ""
        self.refresh_token_ciphertext = ""
        self.refresh_queued_at = None


class ConnectionEvent(models.Model):
    """The connection timeline: every connect attempt, refresh, loss and warning.

    ``detail`` is for people; it never holds a token, a code or a secret.
    """

    class Kind(models.TextChoices):
        CONNECT_STARTED = "connect_started", "Connect started"
        CONNECTED = "connected", "Connected"
        CONNECT_FAILED = "connect_failed", "Connect failed"
        REFRESHED = "refreshed", "Token refreshed"
        REFRESH_FAILED = "refresh_failed", "Refresh failed"
        NEEDS_REAUTH = "needs_reauth", "Needs re-authorization"
        DISCONNECTED = "disconnected", "Disconnected"
        WARNING_SENT = "warning_sent", "Expiry warning sent"
        KEY_ROTATED = "key_rotated", "Encryption key rotated"

    seller = models.ForeignKey(Seller, on_delete=models.CASCADE, related_name="connection_events")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    detail = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["seller", "-created_at"], name="connevent_seller_recent")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.created_at:%Y-%m-%d %H:%M})"


class OAuthState(models.Model):
    """A pending authorization: the ``state`` we sent, stored hashed, single use, 10 minutes."""

    state_hash = models.CharField(max_length=64, unique=True)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "OAuth state"
        verbose_name_plural = "OAuth states"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"state for seller {self.seller_id}"
