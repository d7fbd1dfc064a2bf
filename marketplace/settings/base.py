"""The base of the settings: the environment, the apps, middleware, database, templates
and static files (see ``marketplace/settings/__init__.py`` for the other parts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

# Every environment variable the settings read (all parts). tests/deploy/test_compose.py keeps
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
    "PLATFORM_OAUTH_BASE_URL",
    "PLATFORM_API_BASE_URL",
    "PLATFORM_EDRTS_BASE_URL",
    "PLATFORM_CLIENT_ID",
    "PLATFORM_CLIENT_SECRET",
    "PLATFORM_REDIRECT_URL",
    "PLATFORM_SELLER_ORDER_URL",
    "PLATFORM_TOKEN_BODY",
    "TOKEN_ENCRYPTION_KEYS",
    "EMAIL_URL",
    "DEFAULT_FROM_EMAIL",
    "SECURE_SSL_REDIRECT",
    "LOG_LEVEL",
    "CELERY_DATA_DIR",
    "PUSH_SEND_CONCURRENCY",
    "PULL_INTERVAL_SECONDS",
    "PULL_IDLE_CEILING_SECONDS",
    "REFUND_WATCH_DAYS",
    "LISTING_URL_TEMPLATE",
    "FEED_FILE_RETENTION_DAYS",
    "FEED_FAILED_FILE_RETENTION_HOURS",
    "BUYER_DATA_RETENTION_DAYS",
    "PLATFORM_STEP_RETENTION_DAYS",
    "SYNC_EVENT_RETENTION_DAYS",
    "RECONCILE_RETENTION_DAYS",
    "CELERY_TASK_MAX_DELIVERIES",
    "FEED_MAX_BYTES",
    "FEED_SELLER_MAX_STORED_BYTES",
    "FEED_SELLER_MAX_DELIVERIES_PER_HOUR",
    "FEED_INGEST_MAX_ATTEMPTS",
    "METRICS_TOKEN",
    "MARKETPLACE_TIME_ZONE",
    "MARKETPLACE_CURRENCY",
    "SELLER_DIGEST_MINUTES",
)

DJANGO_ENV: str = env.str("DJANGO_ENV", default="development")
if DJANGO_ENV not in {"development", "test", "production"}:
    raise ImproperlyConfigured(
        f"DJANGO_ENV must be development, test or production, not {DJANGO_ENV!r}"
    )
PRODUCTION = DJANGO_ENV == "production"

DEBUG: bool = env.bool("DEBUG", default=DJANGO_ENV == "development")

APP_PORT: int = env.int("APP_PORT", default=8000)
SANDBOX_PORT: int = env.int("SANDBOX_PORT", default=8100)
APP_BASE_URL: str = env.str("APP_BASE_URL", default=f"http://127.0.0.1:{APP_PORT}").rstrip("/")

# --- The platform ----------------------------------------------------------------
PLATFORM_BASE_URL: str = env.str(
    "PLATFORM_BASE_URL", default=f"http://127.0.0.1:{SANDBOX_PORT}/api/v1"
).rstrip("/")
# /authorize and /access_token: the order interface's base unless set (empty is unset),
# so pointing the order calls at another version does not silently move OAuth with them.
PLATFORM_OAUTH_BASE_URL = (
    env.str("PLATFORM_OAUTH_BASE_URL", default="") or PLATFORM_BASE_URL
).rstrip("/")
# Where a seller corrects an order on the platform: a URL with ``{mp_order_number}``, linked
# from each problem card of the seller's order page. The platform publishes no such page, so
# production leaves it empty (the card then names the order and says where, without a link);
# development points at the sandbox's seller-side order page.
PLATFORM_SELLER_ORDER_URL: str = env.str(
    "PLATFORM_SELLER_ORDER_URL",
    default=""
    if PRODUCTION
    else f"http://127.0.0.1:{SANDBOX_PORT}/sandbox/v2/orders/by-number/{{mp_order_number}}/",
)
# The platform calls this parameter redirect_url; it must match the registered one exactly.
PLATFORM_REDIRECT_URL: str = env.str(
    "PLATFORM_REDIRECT_URL", default=f"{APP_BASE_URL}/sellers/connection/callback/"
)
# The body of POST /access_token: the platform's references disagree (the older page sends
# it form-encoded, the current one JSON). "form" (default) or "json"; same fields either way.
PLATFORM_TOKEN_BODY: str = env.str("PLATFORM_TOKEN_BODY", default="form")
if PLATFORM_TOKEN_BODY not in {"form", "json"}:
    raise ImproperlyConfigured(
        f"PLATFORM_TOKEN_BODY must be form or json, not {PLATFORM_TOKEN_BODY!r}"
    )
# The Authentication and Platform API groups (API token in x-api-key): one base for both.
PLATFORM_API_BASE_URL: str = env.str(
    "PLATFORM_API_BASE_URL", default=f"http://127.0.0.1:{SANDBOX_PORT}/api.php"
).rstrip("/")
# The Event-Driven Sync API (EDRTS): its own host and path at the platform.
PLATFORM_EDRTS_BASE_URL: str = env.str(
    "PLATFORM_EDRTS_BASE_URL", default=f"http://127.0.0.1:{SANDBOX_PORT}/catalog/rest.php"
).rstrip("/")
# The listing URL the listing-status file gives sellers ({listing_id}: our listing's id).
LISTING_URL_TEMPLATE: str = env.str(
    "LISTING_URL_TEMPLATE", default=f"{APP_BASE_URL}/sellers/catalog/listings/{{listing_id}}/"
)
if "{listing_id}" not in LISTING_URL_TEMPLATE:
    raise ImproperlyConfigured("LISTING_URL_TEMPLATE must contain {listing_id}")
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
    # Start-up of every process: the local folders (marketplace/folders.py).
    "marketplace",
    "sellers",
    "marketplace.platform",
    "marketplace.orders",
    "marketplace.returns",
    "marketplace.performance",
    "marketplace.sync",
    "marketplace.reconcile",
    "marketplace.dashboard",
    "marketplace.catalog",
    "marketplace.portal",
    "marketplace.metrics",
    "marketplace.privacy",
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

LOGIN_URL = "sellers:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "sellers:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The marketplace's own zone: every time on a page is shown in it, with its name
# (marketplace/templatetags/display.py). Stored times stay UTC.
MARKETPLACE_TIME_ZONE: str = env.str("MARKETPLACE_TIME_ZONE", default="UTC")
try:
    ZoneInfo(MARKETPLACE_TIME_ZONE)
except (ZoneInfoNotFoundError, ValueError) as error:
    raise ImproperlyConfigured(
        f"MARKETPLACE_TIME_ZONE {MARKETPLACE_TIME_ZONE!r} is not an IANA time zone"
    ) from error
# The currency of catalog prices (the feed's prices carry none; orders carry their own).
MARKETPLACE_CURRENCY: str = env.str("MARKETPLACE_CURRENCY", default="USD").upper()
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
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

# The app's own Redis (embargo, rate budget, doorbell) and, when set, Celery's broker.
REDIS_URL: str = env.str("REDIS_URL", default="")

# --- E-mail ----------------------------------------------------------------------
# Console backend in development: warnings to sellers show in the `make run` output.
EMAIL_CONFIG: dict[str, Any] = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(EMAIL_CONFIG)
DEFAULT_FROM_EMAIL: str = env.str("DEFAULT_FROM_EMAIL", default="marketplace@example.com")
