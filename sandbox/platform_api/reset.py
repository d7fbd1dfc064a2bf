"""What the sandbox's reset clears of the Platform API (children first, for raw deletes):
imports with their logs, exports with their runs and logs, the rate-limit windows and
limits. The API users, accounts and databases are records (``records``: they register
their own)."""

from sandbox.common.api_php import rate_limits
from sandbox.platform_api.exports.models import Export, ExportField, ExportLog, ExportRun
from sandbox.platform_api.exports.runs import waits_interrupt
from sandbox.platform_api.imports.models import Import, ImportLog
from sandbox.platform_api.imports.runs import waits_interrupt as import_waits_interrupt

DATA_MODELS = [ImportLog, Import, ExportLog, ExportRun, ExportField, Export]


def memory_reset() -> None:
    waits_interrupt()
    import_waits_interrupt()
    rate_limits.reset()
