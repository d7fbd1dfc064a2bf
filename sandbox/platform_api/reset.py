"""What the sandbox's reset clears of issues 12 and 13 (children first, for raw deletes).

Always: imports with their logs, exports with their runs and logs, tokens, two-factor codes,
the outbox, rate-limit windows and limits, token waits. Unless ``keep_accounts``: API users,
accounts and their databases with rows (a database belongs to its account, like a seller's
orders)."""

from sandbox.auth_api import token_waits
from sandbox.auth_api.models import (
    OutboxEmail,
    PlatformAccount,
    PlatformToken,
    PlatformUser,
    TwoFactorCode,
)
from sandbox.common.api_php import rate_limits
from sandbox.platform_api.catalog.models import CatalogDatabase, CatalogRow
from sandbox.platform_api.exports.models import Export, ExportField, ExportLog, ExportRun
from sandbox.platform_api.exports.runs import waits_interrupt
from sandbox.platform_api.imports.models import Import, ImportLog
from sandbox.platform_api.imports.runs import waits_interrupt as import_waits_interrupt

DATA_MODELS = [
    ImportLog,
    Import,
    ExportLog,
    ExportRun,
    ExportField,
    Export,
    PlatformToken,
    TwoFactorCode,
    OutboxEmail,
]
ACCOUNT_MODELS = [
    CatalogRow,
    CatalogDatabase,
    PlatformUser.accounts.through,
    PlatformUser,
    PlatformAccount,
]


def memory_reset() -> None:
    waits_interrupt()
    import_waits_interrupt()
    rate_limits.reset()
    token_waits.reset()
