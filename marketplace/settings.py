"""Settings for the marketplace app, read from the environment.

``DJANGO_ENV`` selects the profile:

* ``development`` (default): embedded everything (SQLite file, filesystem Celery
  broker), the local platform sandbox, and clearly-marked development secrets.
* ``production``: no secret has a default; a missing one stops the process at start
  with a message naming every missing variable.

Every variable is listed in the README's configuration table; the docker-compose
test checks that compose only sets variables read here (see ``ENV_VARS``).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from marketplace.config_checks import fernet_keys, production_email

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

# Every environment variable this module reads. tests/test_compose.py keeps
# docker-compose.yml honest against this list.
ENV_VARS = (
    "DJANGO_ENV",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL",
    "REDIS_URL",
    "APP_BASE_URL",
    "APP_PORT",
    "SANDBOX_PORT",
    "PLATFORM_BASE_URL",
    "PLATFORM_API_BASE_URL",
    "PLATFORM_CLIENT_ID",
    "PLATFORM_CLIENT_SECRET",
    "PLATFORM_REDIRECT_URL",
    "TOKEN_ENCRYPTION_KEYS",
    "EMAIL_URL",
    "DEFAULT_FROM_EMAIL",
    "SECURE_SSL_REDIRECT",
    "LOG_LEVEL",
    "CELERY_DATA_DIR",
    "PUSH_SEND_CONCURRENCY",
    "PULL_INTERVAL_SECONDS",
    "LISTING_URL_TEMPLATE",
    "FEED_FILE_RETENTION_DAYS",
)

DJANGO_ENV = env.str("DJANGO_ENV", default="development")
if DJANGO_ENV not in {"development", "test", "production"}:
    raise ImproperlyConfigured(
        f"DJANGO_ENV must be development, test or production, not {DJANGO_ENV!r}"
    )
PRODUCTION = DJANGO_ENV == "production"

# --- Secrets -----------------------------------------------------------------
# Development-only values. They are public (they are in this file), so production
# refuses to start unless every one of them is set in the environment.
_DEV_SECRETS = {
    "SECRET_KEY": "dev-only-insecure-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
    "PLATFORM_CLIENT_ID": "demo-marketplace",
    "PLATFORM_CLIENT_SECRET": "demo-marketplace-secret",
    # Fernet key for development only; production supplies its own list.
    "TOKEN_ENCRYPTION_KEYS": "ZGV2LW9ubHktdG9rZW4ta2V5LW5vdC1mb3ItcHJvZCE=",
}
_REQUIRED_IN_PRODUCTION = (
    *_DEV_SECRETS,
    "EMAIL_URL",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "PLATFORM_BASE_URL",
    "APP_BASE_URL",
)
if PRODUCTION:
    _missing = [name for name in _REQUIRED_IN_PRODUCTION if not env.str(name, default="")]
    if _missing:
        raise ImproperlyConfigured(
            "Production configuration is incomplete; set these environment variables: "
            + ", ".join(_missing)
        )


def _secret(name: str) -> str:
    return env.str(name, default="" if PRODUCTION else _DEV_SECRETS[name])


SECRET_KEY = _secret("SECRET_KEY")
DEBUG = env.bool("DEBUG", default=DJANGO_ENV == "development")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

APP_PORT = env.int("APP_PORT", default=8000)
SANDBOX_PORT = env.int("SANDBOX_PORT", default=8100)
APP_BASE_URL = env.str("APP_BASE_URL", default=f"http://127.0.0.1:{APP_PORT}").rstrip("/")

# --- The platform ----------------------------------------------------------------
PLATFORM_BASE_URL = env.str(
    "PLATFORM_BASE_URL", default=f"http://127.0.0.1:{SANDBOX_PORT}/api/v1"
).rstrip("/")
PLATFORM_CLIENT_ID = _secret("PLATFORM_CLIENT_ID")
PLATFORM_CLIENT_SECRET = _secret("PLATFORM_CLIENT_SECRET")
# The platform calls this parameter redirect_url; it must match the registered one exactly.
PLATFORM_REDIRECT_URL = env.str(
    "PLATFORM_REDIRECT_URL", default=f"{APP_BASE_URL}/sellers/connection/callback/"
)
# The Authentication and Platform API groups (API token in x-api-key): one base for both.
PLATFORM_API_BASE_URL = env.str(
    "PLATFORM_API_BASE_URL", default=f"http://127.0.0.1:{SANDBOX_PORT}/api.php"
).rstrip("/")
# The listing URL the listing-status file gives sellers ({listing_id}: our listing's id).
LISTING_URL_TEMPLATE = env.str(
    "LISTING_URL_TEMPLATE", default=f"{APP_BASE_URL}/sellers/catalog/listings/{{listing_id}}/"
)
if "{listing_id}" not in LISTING_URL_TEMPLATE:
    raise ImproperlyConfigured("LISTING_URL_TEMPLATE must contain {listing_id}")
# Requests per second per API user to those groups, shared by every worker.
PLATFORM_API_RATE_PER_SECOND = 5.0
PLATFORM_CONNECT_TIMEOUT = 5.0
PLATFORM_READ_TIMEOUT = 20.0

# Fernet keys, comma-separated: the first encrypts, all decrypt (key rotation). An
# empty or malformed entry stops the start (naming the variable, never the key).
TOKEN_ENCRYPTION_KEYS = fernet_keys(
    _secret("TOKEN_ENCRYPTION_KEYS"), name="TOKEN_ENCRYPTION_KEYS"
)
# Refresh access tokens that expire within this window (beat sweep), and on use
# when they expire within the leeway.
TOKEN_REFRESH_WINDOW = timedelta(minutes=10)
TOKEN_REFRESH_LEEWAY = timedelta(minutes=2)
TOKEN_REFRESH_BATCH_SIZE = 500
REFRESH_TOKEN_WARNING_DAYS = (30, 7, 1)

# --- Order sync (marketplace/orders) ------------------------------------------------
# Push retries: exponential backoff with jitter, bounded; then "failed" until an admin retries.
PUSH_BACKOFF_BASE = 5.0  # seconds; tests shrink it with settings overrides
PUSH_BACKOFF_CAP = 300.0  # below the Redis visibility_timeout, so countdowns are safe
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
PUSH_SEND_CONCURRENCY = env.int("PUSH_SEND_CONCURRENCY", default=8)
# A drain already queued stops further wake-ups for at most this long (doorbell.py).
PUSH_DOORBELL_SECONDS = 10.0
# The sweeper re-enqueues pending pushes older than this (their wake-up was lost).
PUSH_SWEEP_GRACE_SECONDS = 30.0
PUSH_SWEEP_BATCH_SIZE = 500
# Pull: the platform recommends at most 2 order listings a second per seller.
PLATFORM_LIST_RATE_PER_SECOND = 2.0
PULL_PAGE_SIZE = 50
PULL_CURSOR_OVERLAP = timedelta(minutes=2)  # re-read a little: clocks drift
PULL_LEASE_SECONDS = 300.0
# How often beat pulls every connected seller (shipments reach buyers this late at most).
PULL_INTERVAL_SECONDS = env.float("PULL_INTERVAL_SECONDS", default=90.0)
# A pull retries a failed page or order on its own, this many times, backing off from
# PULL_RETRY_BASE seconds; it sleeps out a platform embargo of up to PULL_HOLD_MAX_WAIT.
PULL_ATTEMPTS = 4
PULL_RETRY_BASE = 0.5
PULL_HOLD_MAX_WAIT = 10.0
PULL_RETRY_NUMBERS_MAX = 1000  # more failed orders than this: the pull does not complete
PULL_FAILING_AFTER = 3  # pulls in a row that failed before the dashboard flags the seller

# The overview reads whole-table aggregates from a snapshot a beat job refreshes every
# 30 s; older than this, the page computes them itself. 0: always compute (tests).
DASHBOARD_ACTIVITY_MAX_AGE = 60

# --- Django --------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    # The intake API's docs page serves the Swagger UI that django-ninja ships (as static
    # files) only when "ninja" is an installed app; otherwise it loads it from a CDN.
    "ninja",
    "csp",
    "axes",
    "sellers",
    "marketplace.platform",
    "marketplace.orders",
    "marketplace.dashboard",
    "marketplace.catalog",
    "marketplace.portal",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "marketplace.urls"
WSGI_APPLICATION = "marketplace.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share one file: WAL lets readers run beside a writer, and
    # IMMEDIATE transactions make writers queue instead of failing with "locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", 60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sign-in throttling (django-axes): failures are counted in the database, so the web
# processes share them without a shared cache (django-ratelimit would need one; the
# development stack has none). Five wrong passwords for one username from one address
# lock that pair out for 15 minutes; the pair, not the username alone, so nobody can
# lock a seller out of their account from elsewhere. A success clears the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "sellers/locked_out.html"
AXES_VERBOSE = False
LOGIN_URL = "sellers:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "sellers:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Days a received catalog feed file is kept after it arrived (retries read it).
FEED_FILE_RETENTION_DAYS = env.int("FEED_FILE_RETENTION_DAYS", default=14)
if FEED_FILE_RETENTION_DAYS < 1:
    raise ImproperlyConfigured("FEED_FILE_RETENTION_DAYS must be at least 1")

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Catalog feed files the platform delivers, kept FEED_FILE_RETENTION_DAYS after they
    # arrived (a failed run is retried from its file), then pruned.
    "catalog_feeds": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(VAR_DIR / "feeds")},
    },
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# --- E-mail ----------------------------------------------------------------------
# Console backend in development: warnings to sellers show in the `make run` output.
EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(EMAIL_CONFIG)
if PRODUCTION:
    production_email(
        raw_url=env.str("EMAIL_URL"), backend=EMAIL_CONFIG["EMAIL_BACKEND"], name="EMAIL_URL"
    )
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="marketplace@example.com")

# --- Security ----------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"  # the OAuth callback is a top-level GET: Lax keeps the session
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy (django-csp): every page loads scripts, styles, images and
# data only from this app; no inline script or style, no frames. The Connect form's
# redirect to the platform is a navigation, which these directives do not restrict.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # Swagger UI and the admin draw a few icons as data: URLs.
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
if PRODUCTION:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

# --- Celery ------------------------------------------------------------------------
# The database is the truth for pending work; the broker only wakes workers, and beat
# sweepers re-enqueue anything that waited too long (see DESIGN.md).
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_DATA_DIR = Path(env.str("CELERY_DATA_DIR", default=str(VAR_DIR / "celery")))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Above the longest task and countdown, so an unacked task is not run twice;
        # far below kombu's 1 h default, so a killed worker's task returns soon.
        "visibility_timeout": 600,
        "unacked_restore_interval": 10,
    }
else:
    # Embedded broker: no server needed. Both folders must be the same one.
    _broker_dir = CELERY_DATA_DIR / "broker"
    _broker_dir.mkdir(parents=True, exist_ok=True)
    (CELERY_DATA_DIR / "processed").mkdir(parents=True, exist_ok=True)
    (CELERY_DATA_DIR / "control").mkdir(parents=True, exist_ok=True)
    # A host in the URL, though the transport ignores it: with none, kombu logs
    # "No hostname was supplied" on every connection (each command, worker and beat).
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir),
        "data_folder_out": str(_broker_dir),
        "processed_folder": str(CELERY_DATA_DIR / "processed"),
        # Broadcast/control messages (ping, purge): kombu's default is ./control.
        "control_folder": str(CELERY_DATA_DIR / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
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
# refreshes. A worker consumes all of them unless started with -Q (production can run
# dedicated workers per queue); sweepers stay on the default queue.
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in ("celery", "push", "pull", "tokens", "catalog")
)
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "marketplace.orders.tasks.order_push_task": {"queue": "push"},
    "marketplace.orders.tasks.orders_push_drain_task": {"queue": "push"},
    "marketplace.orders.tasks.seller_pull_task": {"queue": "pull"},
    "sellers.tasks.connection_refresh_task": {"queue": "tokens"},
    # A 100 000-row feed takes a while: its own queue, so it never delays pushes.
    "marketplace.catalog.tasks.feed_run_ingest_task": {"queue": "catalog"},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(CELERY_DATA_DIR / "celerybeat-schedule")
# beat opens its schedule file at start whatever the broker: its folder must exist.
CELERY_DATA_DIR.mkdir(parents=True, exist_ok=True)
# Periodic jobs: each is a thin task over a service, and each is safe to run late or twice.
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "refresh-expiring-tokens": {
        "task": "sellers.tasks.connection_refresh_sweep_task",
        "schedule": 60.0,
    },
    "warn-expiring-refresh-tokens": {
        "task": "sellers.tasks.refresh_token_expiry_sweep_task",
        "schedule": 3600.0,
    },
    # Orders: re-enqueue due/lost pushes, pull every connected seller, prune the call log.
    "order-sync-sweep": {
        "task": "marketplace.orders.tasks.order_sync_sweep_task",
        "schedule": 30.0,
    },
    "seller-pull-fan-out": {
        "task": "marketplace.orders.tasks.seller_pull_fan_out_task",
        "schedule": PULL_INTERVAL_SECONDS,
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
    "platform-call-prune": {
        "task": "marketplace.orders.tasks.platform_call_prune_task",
        "schedule": 86400.0,
    },
}

# --- Logging -------------------------------------------------------------------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        # Tokens, codes and client secrets never reach a log line.
        "redact_secrets": {"()": "marketplace.log_redaction.RedactSecretsFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact_secrets"],
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "urllib3": {"level": "WARNING"},
        # django-axes logs every sign-in at INFO; lockouts come at WARNING.
        "axes": {"level": "WARNING"},
        # runserver's request lines carry the OAuth callback's ?code=…: route them
        # through the redacting handler instead of Django's default one.
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}
