from django.apps import AppConfig


class ApiUsersRecordsConfig(AppConfig):
    # The label (tables, migration history) predates this package: ``auth_api`` held it.
    name = "sandbox.records.api_users"
    label = "sandbox_auth_api"
    verbose_name = "Platform sandbox: API users"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import resets
        from sandbox.records.api_users.models import (
            OutboxEmail,
            PlatformAccount,
            PlatformToken,
            PlatformUser,
            TwoFactorCode,
        )

        # Tokens, codes and mail always go; users and accounts unless the reset keeps them.
        resets.register(
            "records.api_users",
            data_models=[PlatformToken, TwoFactorCode, OutboxEmail],
            account_models=[PlatformUser.accounts.through, PlatformUser, PlatformAccount],
        )
