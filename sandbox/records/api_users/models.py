"""API users of the Authentication API, their two-factor codes and named API tokens, the
platform accounts they reach, and the outbox the two-factor e-mails land in."""

from django.db import models


class PlatformAccount(models.Model):
    """A platform account (a seller's space holding databases)."""

    account_name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.account_name


class PlatformUser(models.Model):
    """A user with API access: signs in with username, password and an e-mailed code."""

    username = models.CharField(max_length=150, unique=True)
    password_hash = models.CharField(max_length=200)
    email = models.CharField(max_length=254)
    accounts = models.ManyToManyField(PlatformAccount, related_name="users", blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.username


class TwoFactorCode(models.Model):
    user = models.ForeignKey(PlatformUser, on_delete=models.CASCADE, related_name="codes")
    code_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    # Set when used, or when a newer code replaced it.
    spent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["user", "spent_at"], name="sbx_auth_code_open")]

    def __str__(self) -> str:
        return f"2FA code {self.id}"


class PlatformToken(models.Model):
    """An API token (sent in ``x-api-key``); a user may hold several, told apart by name."""

    user = models.ForeignKey(PlatformUser, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=200, blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"API token {self.name or self.id}"


class OutboxEmail(models.Model):
    """An e-mail the platform 'sent' (nothing leaves the sandbox)."""

    to = models.CharField(max_length=254, db_index=True)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    # The two-factor code in clear, for tests and the page: the outbox *is* the mailbox.
    code = models.CharField(max_length=20, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"mail to {self.to}: {self.subject}"
