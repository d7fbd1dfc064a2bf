"""The numbers that set the pace of the sync, each with why it has its value.

Tests shrink several of them with settings overrides; some can be set from the
environment (``PUSH_SEND_CONCURRENCY``, ``PULL_INTERVAL_SECONDS`` and the ``FEED_*``
limits of the catalog feeds).
"""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from marketplace.settings.base import env

# --- Platform calls -------------------------------------------------------------------
# Requests per second per API user to the Authentication and Platform API groups,
# shared by every worker: the platform limits those groups per user.
PLATFORM_API_RATE_PER_SECOND = 5.0
# A platform that does not accept the connection in 5 s is down: fail fast and retry.
PLATFORM_CONNECT_TIMEOUT = 5.0
# Long enough for a slow answer under load, short enough to bound a push's lease.
PLATFORM_READ_TIMEOUT = 20.0
# Token calls wait longer: an answer given up on may have rotated the refresh token at the
# platform, and presenting the spent one next time revokes the grant (oauth.py).
PLATFORM_TOKEN_READ_TIMEOUT = 60.0

# --- Tokens ---------------------------------------------------------------------------
# The beat sweep refreshes access tokens that expire within this window (every minute),
# so the sweep, not the caller, usually renews them.
TOKEN_REFRESH_WINDOW = timedelta(minutes=10)
# A caller refreshes on use only when its token expires within this: the sweep missed it.
TOKEN_REFRESH_LEEWAY = timedelta(minutes=2)
# Rows per sweep batch: bounded transactions through the expiry index.
TOKEN_REFRESH_BATCH_SIZE = 500
# Days before a refresh token expires when the seller is warned (each warning once).
REFRESH_TOKEN_WARNING_DAYS = (30, 7, 1)

# --- Order sync: pushes (marketplace/orders) -----------------------------------------
# Push retries: exponential backoff with jitter, bounded; then "failed" until an admin
# retries. The first retry comes after ~5 s: most platform hiccups are short.
PUSH_BACKOFF_BASE = 5.0  # seconds; tests shrink it with settings overrides
PUSH_BACKOFF_CAP = 300.0  # below the Redis visibility_timeout, so countdowns are safe
# Eight failed attempts span ~10 minutes of backoff: longer is an outage a person sees.
PUSH_MAX_FAILURES = 8
PUSH_RATE_LIMIT_DEFAULT_WAIT = 30.0  # a 429 without Retry-After / X-Rate-Limit-Reset
# A push claims its orders for this long (no row lock across HTTP). A batch stops
# starting calls while its longest call (two attempts of connect+read timeouts plus a
# token refresh) could still outlive the lease, so it must exceed that by a margin.
PUSH_LEASE_SECONDS = 120.0
# Drains claim due orders this many at a time (one claim and one record transaction,
# one call-log INSERT per batch) and hand over after this many seconds.
PUSH_BATCH_SIZE = 50
PUSH_DRAIN_SECONDS = 30.0
# Calls in flight per worker process while a batch is sent (threads): a push mostly
# waits for the platform, so this, not the process count, sets the rate per process.
PUSH_SEND_CONCURRENCY: int = env.int("PUSH_SEND_CONCURRENCY", default=8)
# A drain already queued stops further wake-ups for at most this long (doorbell.py).
PUSH_DOORBELL_SECONDS = 10.0
# The sweeper re-enqueues pending pushes older than this (their wake-up was lost).
PUSH_SWEEP_GRACE_SECONDS = 30.0
# Rows the sweeper re-enqueues per transaction: bounded, whatever the backlog.
PUSH_SWEEP_BATCH_SIZE = 500

# --- Order sync: pulls ----------------------------------------------------------------
# Pull: the platform recommends at most 2 order listings a second per seller.
PLATFORM_LIST_RATE_PER_SECOND = 2.0
# Orders per listing page: few round trips, small enough answers.
PULL_PAGE_SIZE = 50
PULL_CURSOR_OVERLAP = timedelta(minutes=2)  # re-read a little: clocks drift
# One pull of a seller at a time; a crashed pull's claim lapses after this.
PULL_LEASE_SECONDS = 300.0
# How often a seller with open work (unsettled orders, a recent change) is pulled
# (shipments reach buyers this late at most).
PULL_INTERVAL_SECONDS: float = env.float("PULL_INTERVAL_SECONDS", default=90.0)
# A seller with nothing open is pulled less and less often: the interval doubles after
# each pull that found nothing, up to this ceiling. Nothing can change for such a seller
# that we would not hear of first (an order placed or changed here makes their pull due
# again in the same transaction), so the ceiling is only a safety net; at 100 000 sellers
# with 1 % active, 6 h keeps idle listings below the active ones (docs/benchmarks.md, P9).
PULL_IDLE_CEILING_SECONDS: float = env.float("PULL_IDLE_CEILING_SECONDS", default=21600.0)
# A failing pull is retried later and later (doubling from the interval) up to this.
PULL_FAILURE_CEILING_SECONDS = 900.0
# How often beat looks for due pulls. Each look takes the pulls due within half this
# period, and the next pull counts from when the last was queued, so a seller with open
# work is pulled every PULL_INTERVAL_SECONDS, not every interval plus a beat period. A
# look that finds nothing due is one index probe.
PULL_FAN_OUT_EVERY_SECONDS = min(15.0, PULL_INTERVAL_SECONDS / 4)
# The fan-out claims due sellers this many at a time (one statement per batch), at most
# PULL_FAN_OUT_MAX_BATCHES batches a tick; the rest stay due for the next tick.
PULL_FAN_OUT_BATCH = 500
PULL_FAN_OUT_MAX_BATCHES = 40
# A seller's own "Pull now" (portal) works once per this many seconds per seller: one pull
# reads every order the seller changed, so more often only loads the platform (and the
# seller's rate limit there) for nothing; staff's button is not limited.
PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS = 60
# A pull retries a failed page or order on its own, this many times, backing off from
# PULL_RETRY_BASE seconds; it sleeps out a platform embargo of up to PULL_HOLD_MAX_WAIT.
PULL_ATTEMPTS = 4
PULL_RETRY_BASE = 0.5
PULL_HOLD_MAX_WAIT = 10.0
PULL_RETRY_NUMBERS_MAX = 1000  # more failed orders than this: the pull does not complete
PULL_FAILING_AFTER = 3  # pulls in a row that failed before the dashboard flags the seller

# --- Pages and files --------------------------------------------------------------------
# The overview reads whole-table aggregates from a snapshot a beat job refreshes every
# 30 s; older than this, the page computes them itself. 0: always compute (tests).
DASHBOARD_ACTIVITY_MAX_AGE = 60
# Days a received catalog feed file is kept after it arrived (retries read it).
FEED_FILE_RETENTION_DAYS: int = env.int("FEED_FILE_RETENTION_DAYS", default=14)
if FEED_FILE_RETENTION_DAYS < 1:
    raise ImproperlyConfigured("FEED_FILE_RETENTION_DAYS must be at least 1")

# --- Catalog feed files: limits checked while reading (issue 22) ------------------------
# Each fails the run at once with its reason and changes nothing. Bytes after
# decompression; rows read, blank lines included (a flood of newlines is a flood of
# rows); fields in the header or any row; characters (and UTF-8 bytes) in one line or
# one record, checked before csv holds it whole; entries in a zip archive (only the first
# file is read; the count comes from the archive's end record, before its directory).
FEED_MAX_DECOMPRESSED_BYTES = 2 * 1024 * 1024 * 1024
FEED_MAX_ROWS = 2_000_000
FEED_MAX_FIELDS = 200
FEED_MAX_LINE_BYTES = 1024 * 1024
FEED_ZIP_MAX_ENTRIES = 4
# A full feed that would deactivate more than this share of the seller's active listings
# is held (nothing applied) until staff confirm it.
FEED_MAX_DEACTIVATE_SHARE = 0.5

# Hours the file of a run that failed as malformed (not a CSV, bad compression, no valid
# row) is kept: long enough for staff to look at it, far less than a good file's days.
FEED_FAILED_FILE_RETENTION_HOURS: int = env.int("FEED_FAILED_FILE_RETENTION_HOURS", default=24)
if FEED_FAILED_FILE_RETENTION_HOURS < 1:
    raise ImproperlyConfigured("FEED_FAILED_FILE_RETENTION_HOURS must be at least 1")

# --- Catalog feeds: the door (receive_views.py) -----------------------------------------
# Bytes one delivered file may have (checked against Content-Length, then while reading).
# A feed of 100 000 products is ~30 MB as plain CSV: 2 GiB is far above any real one.
FEED_MAX_BYTES: int = env.int("FEED_MAX_BYTES", default=2 * 1024**3)
# Bytes of kept files (runs that still hold one) per seller; beyond it a delivery is 507.
FEED_SELLER_MAX_STORED_BYTES: int = env.int("FEED_SELLER_MAX_STORED_BYTES", default=10 * 1024**3)
# Deliveries per seller in any hour; beyond it 429 with Retry-After. A platform's export
# runs on a schedule (hourly at most), plus staff's "Run now".
FEED_SELLER_MAX_DELIVERIES_PER_HOUR: int = env.int(
    "FEED_SELLER_MAX_DELIVERIES_PER_HOUR", default=12
)
# Times a run's ingestion may start (each start counts); a run still "ingesting" after its
# lease this many times lost its worker each time (a poison file): failed for good.
FEED_INGEST_MAX_ATTEMPTS: int = env.int("FEED_INGEST_MAX_ATTEMPTS", default=3)
# A transient database error during an ingest (deadlock, serialization failure, lost
# connection) is tried again this many times in all, waiting BACKOFF s, then twice that...
FEED_INGEST_DB_TRIES = 3
FEED_INGEST_DB_BACKOFF = 1.0
# The ingest task's time limits (s). A million-row feed takes about a minute; the limit is
# for a loaded machine. The Redis broker's visibility_timeout is derived from it (celery.py):
# a task still running past that timeout would be delivered to a second worker.
# Postgres work_mem of an ingest's transaction (its sort and hash joins over the staged
# rows); one ingest runs per seller at a time.
FEED_INGEST_WORK_MEM = "128MB"
FEED_INGEST_SOFT_TIME_LIMIT = 1800
FEED_INGEST_TIME_LIMIT = 1900
for _name in (
    "FEED_MAX_BYTES",
    "FEED_SELLER_MAX_STORED_BYTES",
    "FEED_SELLER_MAX_DELIVERIES_PER_HOUR",
    "FEED_INGEST_MAX_ATTEMPTS",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1")

# --- Listing status back to the seller: EDRTS (catalog/listing_status/edrts_sender.py) ---
# Requests per second per API user to EDRTS, shared by every worker: the platform limits
# the group per user (the sandbox's default is 300 a minute); a little below it.
EDRTS_RATE_PER_SECOND = 4.8
# Records per request: the platform's advice is 50 to 150. A seller's drain sends fewer
# than EDRTS_BATCH_MIN only once its oldest waiting change is EDRTS_LINGER_SECONDS old:
# a burst of changes fills requests, a lone change still leaves within a second or two.
EDRTS_BATCH_MIN = 50
EDRTS_BATCH_MAX = 150
EDRTS_LINGER_SECONDS = 1.0
# Outbox rows read per step to coalesce (a SKU changed several times is sent once).
EDRTS_SCAN_ROWS = 2000
# A drain sleeps out a platform embargo of up to this, else hands over with a countdown.
EDRTS_HOLD_MAX_WAIT = 2.0
# One drain per seller at a time: its lease, and how long it drains before handing over.
EDRTS_LEASE_SECONDS = 120.0
EDRTS_DRAIN_SECONDS = 30.0
# Requests one drain sends before it queues itself again: sellers take turns on the
# workers (a seller with a 100 000-status backlog never starves the others).
EDRTS_REQUESTS_PER_DRAIN = 2
# Failed sends back off from EDRTS_BACKOFF_BASE doubling to EDRTS_BACKOFF_CAP; after
# EDRTS_MAX_FAILURES in a row the seller's sync waits for staff (the page shows the
# error; "Re-send all" or "Retry now" starts it again; the daily import repairs meanwhile).
EDRTS_BACKOFF_BASE = 5.0
EDRTS_BACKOFF_CAP = 300.0
EDRTS_MAX_FAILURES = 8
# The beat sweep wakes sellers whose changes wait (a lost wake-up, a backoff that ended).
EDRTS_SWEEP_SECONDS = 10.0
# Settled outbox rows are kept this long (the page's counts, what happened), then pruned.
EDRTS_KEEP_SENT_DAYS = 7

# --- returns and seller refunds (marketplace/returns) ---
# A return's respond_date: the seller is asked to answer within this many days; the staff
# list shows returns still waiting after it.
RETURN_RESPOND_DAYS = 14
# A return still AWAITING_AUTHORIZATION this many days after the buyer asked is listed as
# overdue for staff and the seller (under the reference's reading nothing else tells us a
# seller refused it).
RETURN_AUTHORIZATION_DAYS = 14
# A listed refund or return that cannot be stored or decided (any error) is tried again at
# the next pulls this many times, then left as a dead letter staff see (until it changes).
RETURNS_RECORD_MAX_FAILURES = 5
# Sellers' refunds are listed only for sellers with an order placed within this many days
# that got past PENDING (refunds come after shipment); older orders are not watched.
REFUND_WATCH_DAYS: int = env.int("REFUND_WATCH_DAYS", default=180)
# Platform steps of returns and refunds (push a return, complete, report errors).
RETURN_STEP_MAX_FAILURES = 8
RETURN_STEP_LEASE_SECONDS = 120.0
RETURN_STEP_BATCH_SIZE = 50
# A return push waits this long between looks while its order is not on the platform yet.
RETURN_PUSH_ORDER_WAIT_SECONDS = 10.0

# --- buyers' personal data and tables that grow with traffic (marketplace/privacy) ---
# Buyer data (names, e-mail, phone, VAT, address, notes) of an order closed and untouched
# this long is replaced by a pseudonym by a daily job (README, "Buyers' personal data").
BUYER_DATA_RETENTION_DAYS: int = env.int("BUYER_DATA_RETENTION_DAYS", default=365)
if BUYER_DATA_RETENTION_DAYS < 1:
    raise ImproperlyConfigured("BUYER_DATA_RETENTION_DAYS must be at least 1")
# Done platform steps of returns/refunds and per-order sync history are pruned after this
# many days (dead letters stay until staff act).
PLATFORM_STEP_RETENTION_DAYS: int = env.int("PLATFORM_STEP_RETENTION_DAYS", default=30)
SYNC_EVENT_RETENTION_DAYS: int = env.int("SYNC_EVENT_RETENTION_DAYS", default=180)
if min(PLATFORM_STEP_RETENTION_DAYS, SYNC_EVENT_RETENTION_DAYS) < 1:
    raise ImproperlyConfigured(
        "PLATFORM_STEP_RETENTION_DAYS and SYNC_EVENT_RETENTION_DAYS must be at least 1"
    )
# A return step whose seller's connection is not live waits RETURN_STEP_CONNECTION_WAIT
# seconds, doubling, this many times; then it is a dead letter staff see, resumed by
# itself once the seller reconnects.
RETURN_STEP_MAX_CONNECTION_WAITS = 12
# A step claimed this many times (a worker that died while sending) is a dead letter.
RETURN_STEP_MAX_ATTEMPTS = 30
# A task message delivered this many times (its worker died each time: acks_late and
# reject_on_worker_lost requeue it) is dropped with an error in the log.
CELERY_TASK_MAX_DELIVERIES: int = env.int("CELERY_TASK_MAX_DELIVERIES", default=5)
# The seller's e-mail digest of what needs them (problems, returns to authorize, refused
# listings, a lost connection): at most one per seller every SELLER_DIGEST_MINUTES.
SELLER_DIGEST_MINUTES: int = env.int("SELLER_DIGEST_MINUTES", default=60)

# --- Seller performance (marketplace/performance) -----------------------------------
# An order without a latest ship date must ship within this many days of its purchase
# (the marketplace's default handling time), for the late shipment rate.
PERFORMANCE_HANDLING_DAYS = 2
# Sellers are judged on this window (the 7- and 90-day figures are shown, not judged).
PERFORMANCE_FLAG_WINDOW_DAYS = 30
# A rate is judged only once its denominator reaches this: 1 late order of 2 is no signal.
PERFORMANCE_MIN_SAMPLE = 10
# Days of daily figures kept: the 90-day trend and a margin.
PERFORMANCE_KEEP_DAYS = 100
# The limits (rates as fractions, times in days, counts): late shipment, cancellation and
# valid tracking are Amazon's account-health targets; refund rate is Walmart's; the others
# are ours (README, "Seller performance").
PERFORMANCE_THRESHOLDS: dict[str, float] = {
    "late_shipment": 0.04,
    "valid_tracking": 0.95,
    "seller_cancel": 0.025,
    "refund_rate": 0.06,
    "refund_money": 0.06,
    "return_rate": 0.10,
    "return_money": 0.10,
    "paused_refunds": 0.10,
    "ship_days_median": 2.0,
    "ship_days_p90": 4.0,
    "listing_refusal": 0.10,
    "returns_overdue": 0,
    # Days from a return's request to its authorization: Amazon expects an answer to a
    # return request within 2 business days; 9 in 10 within a week, half the
    # RETURN_AUTHORIZATION_DAYS after which a return is listed as overdue.
    "authorization_days_median": 2.0,
    "authorization_days_p90": 7.0,
}

# --- reconciliation with the platform (marketplace/reconcile) ---
# A pass compares every open order, return and refund of a seller with the platform, and a
# bounded sample of recently closed ones: closed within this many days, at most this many
# orders (newest first). The sample rides along with open work; a seller with nothing open
# costs no platform call.
RECONCILE_CLOSED_DAYS = 7
RECONCILE_CLOSED_SAMPLE = 50
# A pass (scheduled, staff, command) first runs one ordinary pull of the seller, so a
# difference it finds is drift no cursor shows, not a change the next pull would have read
# anyway (findings and their alerts mean something). Off: the pass compares at once (the
# comparison tests, which set up a state the pull has not read on purpose).
RECONCILE_PULL_FIRST = True
# Listing statuses a pass reads back (Content API), newest sent first: those sent within
# RECONCILE_CLOSED_DAYS, at most this many (50 a request).
RECONCILE_STATUS_SAMPLE = 1000
# Beat's tick: every seller with open work gets one slot in the day (a hash of its id);
# each tick passes the sellers whose slot fell since the last tick, looking this many
# seconds further back so a missed tick (a beat restart) still runs them.
RECONCILE_TICK_SECONDS: float = 600.0
RECONCILE_LOOKBACK_SECONDS: float = 3600.0
# Runs and findings are deleted by a daily job once this many days old; a finding still
# open (left to staff) is never deleted, nor the run it belongs to (README, Reconciliation).
RECONCILE_RETENTION_DAYS: int = env.int("RECONCILE_RETENTION_DAYS", default=90)
if RECONCILE_RETENTION_DAYS < 1:
    raise ImproperlyConfigured("RECONCILE_RETENTION_DAYS must be at least 1")
