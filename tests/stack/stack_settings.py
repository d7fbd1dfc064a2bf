"""Settings for stack tests that kill a worker: the app's, with the pace of recovery
shortened (as ``bench.soak_settings`` does) so a killed worker's claims come back in
seconds instead of minutes. The lease still exceeds the longest push
(``push.call_budget_seconds``: 3 x (connect + read timeout) = 27 s)."""

from marketplace.settings import *  # noqa: F403

PLATFORM_CONNECT_TIMEOUT = 1.0
PLATFORM_READ_TIMEOUT = 8.0
PUSH_LEASE_SECONDS = 35.0
PUSH_SWEEP_GRACE_SECONDS = 3.0
CELERY_BEAT_SCHEDULE = {
    **CELERY_BEAT_SCHEDULE,  # noqa: F405
    "order-sync-sweep": {"task": "marketplace.orders.tasks.order_sync_sweep_task", "schedule": 3.0},
}
