"""Settings for the soak: the app's, with the clock sped up so ten minutes hold a lot of
failure handling.

Only the knobs that the fault mix exercises change: a short read timeout (the sandbox's
``hang`` fault outlives it), short backoffs, leases and sweep grace, so retries, lost
wake-ups and a killed worker's claims come back within seconds instead of minutes. The
lease still exceeds the longest push (two attempts of connect+read timeout plus a token
refresh: 2 x (1 + 2) + 3 s).
"""

from datetime import timedelta

from bench.settings import *  # noqa: F403

PLATFORM_CONNECT_TIMEOUT = 1.0
PLATFORM_READ_TIMEOUT = 2.0
# Above the soak's 3 s hangs: a token answer is waited for (see tuning.py), the rest not.
PLATFORM_TOKEN_READ_TIMEOUT = 10.0
PUSH_BACKOFF_BASE = 0.5
PUSH_BACKOFF_CAP = 8.0
PUSH_RATE_LIMIT_DEFAULT_WAIT = 2.0
PUSH_LEASE_SECONDS = 20.0
PUSH_SWEEP_GRACE_SECONDS = 5.0
PULL_LEASE_SECONDS = 30.0
# This process plays beat (a fan-out every 4 s): sellers with open orders are due as often.
PULL_INTERVAL_SECONDS = 4.0
PULL_FAN_OUT_EVERY_SECONDS = 4.0
PULL_IDLE_CEILING_SECONDS = 30.0
PULL_CURSOR_OVERLAP = timedelta(seconds=30)
# The catalog side (bench/soak_catalog.py): a killed worker's EDRTS lease and a backoff
# after the sandbox's 503s come back within seconds (a drain sends at most
# EDRTS_REQUESTS_PER_DRAIN requests, each within the read timeout).
EDRTS_LEASE_SECONDS = 15.0
EDRTS_DRAIN_SECONDS = 8.0
EDRTS_BACKOFF_BASE = 0.5
EDRTS_BACKOFF_CAP = 8.0
# Feed files in the run's own folder (beside the worker's CELERY_DATA_DIR), not var/feeds.
STORAGES = {
    **STORAGES,  # noqa: F405
    "catalog_feeds": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(CELERY_DATA_DIR.parent / "feeds")},  # noqa: F405
    },
}
