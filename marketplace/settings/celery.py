"""Celery: the broker (Redis, or the embedded file broker in development), queues,
routes and beat's schedule.

Nothing here creates a folder: the embedded broker's folders and beat's schedule folder
are made at process start (``marketplace.apps``) and when Celery reads its configuration
(``marketplace.celery``), so a fresh checkout works whatever the broker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kombu import Exchange, Queue

from marketplace.settings.base import REDIS_URL, VAR_DIR, env
from marketplace.settings.tuning import (
    EDRTS_SWEEP_SECONDS,
    FEED_INGEST_TIME_LIMIT,
    PULL_FAN_OUT_EVERY_SECONDS,
    RECONCILE_TICK_SECONDS,
)

# The database is the truth for pending work; the broker only wakes workers, and beat
# sweepers re-enqueue anything that waited too long (see DESIGN.md).
CELERY_DATA_DIR = Path(env.str("CELERY_DATA_DIR", default=str(VAR_DIR / "celery")))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {
        # Above the longest task (the feed ingest's hard time limit) and countdown, so an
        # unacked task is never delivered to a second worker while the first still runs;
        # below kombu's 1 h default, so a killed worker's task returns sooner (the beat
        # sweeps re-queue pending work from the database well before that anyway).
        "visibility_timeout": FEED_INGEST_TIME_LIMIT + 300,
        "unacked_restore_interval": 10,
    }
else:
    # Embedded broker: no server needed. kombu's filesystem transport with atomic writes
    # and reads that set a bad file aside instead of dying (``marketplace.file_broker``:
    # kombu's own could hand a worker half a message). Both folders must be the same one.
    from marketplace.file_broker import ALIAS as _EMBEDDED_TRANSPORT
    from marketplace.file_broker import register as _embedded_transport_register

    _embedded_transport_register()
    _broker_dir = CELERY_DATA_DIR / "broker"
    # A host in the URL, though the transport ignores it: with none, kombu logs
    # "No hostname was supplied" on every connection (each command, worker and beat).
    CELERY_BROKER_URL = f"{_EMBEDDED_TRANSPORT}://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir),
        "data_folder_out": str(_broker_dir),
        "processed_folder": str(CELERY_DATA_DIR / "processed"),
        # Message files that could not be read: kept here and logged, never fatal.
        "broken_folder": str(CELERY_DATA_DIR / "broken"),
        # Broadcast/control messages (ping, purge): kombu's default is ./control.
        "control_folder": str(CELERY_DATA_DIR / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's consumer with its reconnect fixed: 5.7.0's died at a broker restart with tasks
# in flight (see the module).
CELERY_WORKER_CONSUMER = "marketplace.broker_consumer:ReconnectingConsumer"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 120
CELERY_TASK_TIME_LIMIT = 180
CELERY_TIMEZONE = "UTC"
# One queue per job type, so a backlog of slow pulls never delays pushes or token
# refreshes. A worker consumes all of them unless started with -Q (production runs
# dedicated workers per queue); sweepers stay on the default queue, but the catalog's.
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in ("celery", "push", "pull", "tokens", "catalog", "edrts")
)
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "marketplace.orders.tasks.order_push_task": {"queue": "push"},
    "marketplace.orders.tasks.orders_push_drain_task": {"queue": "push"},
    "marketplace.sync.tasks.seller_pull_task": {"queue": "pull"},
    "marketplace.sync.tasks.seller_after_sale_pull_task": {"queue": "pull"},
    "marketplace.returns.tasks.return_steps_drain_task": {"queue": "push"},
    "marketplace.reconcile.tasks.seller_reconcile_task": {"queue": "pull"},
    "sellers.tasks.connection_refresh_task": {"queue": "tokens"},
    # Catalog work (a 100 000-row feed's ingestion, the catalog's sweeps): its own queue,
    # so a big or poisonous feed never delays pushes or token refreshes. Production runs
    # a separate worker for it (docker-compose.yml's catalog-worker); `make run`'s worker
    # has no -Q, so it consumes every queue above, this one included.
    "marketplace.catalog.tasks.*": {"queue": "catalog"},
    # Listing statuses back to sellers (EDRTS) within seconds: never behind a feed's
    # ingestion. Exact names win over the pattern above.
    "marketplace.catalog.tasks.status_sync_drain_task": {"queue": "edrts"},
    "marketplace.catalog.tasks.status_sync_sweep_task": {"queue": "edrts"},
}
# beat opens its schedule file at start whatever the broker: its folder must exist
# (TRAPS.md; ``marketplace.folders`` makes it).
CELERY_BEAT_SCHEDULE_FILENAME = str(CELERY_DATA_DIR / "celerybeat-schedule")
# Periodic jobs: each is a thin task over a service, and each is safe to run late or twice.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "refresh-expiring-tokens": {
        "task": "sellers.tasks.connection_refresh_sweep_task",
        "schedule": 60.0,
    },
    "warn-expiring-refresh-tokens": {
        "task": "sellers.tasks.refresh_token_expiry_sweep_task",
        "schedule": 3600.0,
    },
    # Orders: re-enqueue due/lost pushes, prune the call log.
    "order-sync-sweep": {
        "task": "marketplace.orders.tasks.order_sync_sweep_task",
        "schedule": 30.0,
    },
    # Sync: start the sellers who just connected, queue the pulls that are due (each runs
    # the orders pull, then the returns and refunds pull: marketplace/sync/pull.py).
    "seller-pull-fan-out": {
        "task": "marketplace.sync.tasks.seller_pull_fan_out_task",
        "schedule": PULL_FAN_OUT_EVERY_SECONDS,
    },
    # Returns and refunds: the outbox of their platform calls (also woken on commit).
    "return-steps-drain": {
        "task": "marketplace.returns.tasks.return_steps_drain_task",
        "schedule": 30.0,
    },
    "dashboard-activity-snapshot": {
        "task": "marketplace.dashboard.tasks.activity_snapshot_task",
        "schedule": 30.0,
    },
    # Catalog: re-queue feed files whose ingestion wake-up was lost; read each feed's
    # delivery status and each listing-status import's last run at the platform (waits
    # while the API user needs to sign in).
    "catalog-feed-run-sweep": {
        "task": "marketplace.catalog.tasks.feed_run_sweep_task",
        "schedule": 60.0,
    },
    # Received feed files older than FEED_FILE_RETENTION_DAYS are deleted (runs stay).
    "catalog-feed-files-prune": {
        "task": "marketplace.catalog.tasks.feed_files_prune_task",
        "schedule": 3600.0,
    },
    "catalog-feed-status-sweep": {
        "task": "marketplace.catalog.tasks.feed_status_sweep_task",
        "schedule": 300.0,
    },
    # Exports and imports a failed set-up (or an import's removal) could not delete at
    # the platform (waits while the API user needs to sign in).
    "catalog-cleanup-sweep": {
        "task": "marketplace.catalog.tasks.provisioned_cleanup_sweep_task",
        "schedule": 300.0,
    },
    # Listing statuses (EDRTS): wake sellers whose changes wait (a lost wake-up, an ended
    # backoff); prune settled outbox rows.
    "catalog-status-sync-sweep": {
        "task": "marketplace.catalog.tasks.status_sync_sweep_task",
        "schedule": EDRTS_SWEEP_SECONDS,
    },
    "catalog-status-changes-prune": {
        "task": "marketplace.catalog.tasks.status_changes_prune_task",
        "schedule": 3600.0,
    },
    # The sellers' "what needs you" e-mails (each at most every SELLER_DIGEST_MINUTES).
    "seller-digests": {
        "task": "marketplace.portal.tasks.seller_digests_task",
        "schedule": 60.0,
    },
    "platform-call-prune": {
        "task": "marketplace.orders.tasks.platform_call_prune_task",
        "schedule": 86400.0,
    },
    # Seller performance: every seller's scorecard for the day, set-based (its cost follows
    # the orders in the 90-day window); hourly so a crossing is seen the same day.
    "performance-scorecards-refresh": {
        "task": "marketplace.performance.tasks.scorecards_refresh_task",
        "schedule": 3600.0,
    },
    # Buyers' personal data: pseudonymized once an order is closed for
    # BUYER_DATA_RETENTION_DAYS (daily); orders of erased buyers as soon as they close.
    "buyer-data-retention": {
        "task": "marketplace.privacy.tasks.buyer_data_retention_task",
        "schedule": 86400.0,
    },
    "pending-erasures": {
        "task": "marketplace.privacy.tasks.pending_erasures_task",
        "schedule": 600.0,
    },
    # Reconciliation with the platform: the sellers whose daily slot fell since the last
    # tick (marketplace/reconcile/schedule.py); each pass runs as its own task.
    "reconcile-tick": {
        "task": "marketplace.reconcile.tasks.reconcile_tick_task",
        "schedule": RECONCILE_TICK_SECONDS,
    },
    # Runs and findings past RECONCILE_RETENTION_DAYS (an open finding and its run stay).
    "reconcile-rows-prune": {
        "task": "marketplace.reconcile.tasks.reconcile_rows_prune_task",
        "schedule": 86400.0,
    },
    # Done return steps, per-order sync history, "Pull now" requests past their retention.
    "traffic-tables-prune": {
        "task": "marketplace.privacy.tasks.traffic_tables_prune_task",
        "schedule": 86400.0,
    },
}
