"""API users and platform accounts: idempotent upserts used by the control API and the CLI."""

from sandbox.common import clock
from sandbox.common.secrets_hashing import password_hash
from sandbox.records.api_users.models import PlatformAccount, PlatformUser


def account_upsert(*, account_name: str) -> PlatformAccount:
    account, _ = PlatformAccount.objects.get_or_create(
        account_name=account_name, defaults={"created_at": clock.now()}
    )
    return account


def api_user_upsert(
    *, username: str, password: str, email: str, accounts: list[PlatformAccount]
) -> PlatformUser:
    """Create or update a user; the password is replaced, access is set to ``accounts``."""
    user, _ = PlatformUser.objects.update_or_create(
        username=username,
        defaults={"password_hash": password_hash(password), "email": email},
        create_defaults={
            "password_hash": password_hash(password),
            "email": email,
            "created_at": clock.now(),
        },
    )
    user.accounts.set(accounts)
    return user
