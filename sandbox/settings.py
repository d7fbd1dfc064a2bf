"""Settings of the sandbox process (never used by the marketplace app).

Database: ``SANDBOX_DATABASE_URL`` (a SQLite path, ``sqlite:///path`` or a Postgres URL);
default ``var/sandbox.sqlite3``.
"""

import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent
REPO_DIR = BASE_DIR.parent

SECRET_KEY = os.environ.get("SANDBOX_SECRET_KEY", "sandbox-local-simulator-not-a-secret")
DEBUG = os.environ.get("SANDBOX_DEBUG", "") == "1"
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    # The platform's records first: the reset empties rooms in the reverse order, so every
    # group's rows go before the records they point at.
    "sandbox.records.orders.apps.OrdersRecordsConfig",
    "sandbox.records.api_users.apps.ApiUsersRecordsConfig",
    "sandbox.records.databases.apps.DatabasesRecordsConfig",
    "sandbox.order_source.apps.OrderSourceConfig",
    "sandbox.orders_v2.apps.OrdersV2Config",
    # Issue 12: the Authentication API and the Platform API's exports.
    "sandbox.auth_api.apps.AuthApiConfig",
    "sandbox.platform_api.exports.apps.ExportsConfig",
    # Issue 13: the Platform API's imports.
    "sandbox.platform_api.imports.apps.ImportsConfig",
    "sandbox.platform_api.apps.PlatformApiConfig",
    # Issue 24: the Event-Driven Sync API (EDRTS), on the records' databases.
    "sandbox.edrts.apps.EdrtsConfig",
]

MIDDLEWARE = [
    "sandbox.common.request_log.RequestLogMiddleware",
    # Before the faults: it sees every arrival and every 429/503 they answer.
    "sandbox.order_source.seller_waits.RetryWatchMiddleware",
    # The same for /api.php, per API token (x-api-key).
    "sandbox.auth_api.token_waits.TokenWaitsMiddleware",
    "sandbox.common.additive_fields.AdditiveFieldsMiddleware",
    "sandbox.common.faults.FaultMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
]

ROOT_URLCONF = "sandbox.urls"
WSGI_APPLICATION = "sandbox.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.csrf"]},
    }
]


def _database_config(url: str) -> dict:
    if url.startswith(("postgres://", "postgresql://", "pgsql://")):
        config = environ.Env.db_url_config(url)
        config["CONN_MAX_AGE"] = None
        return config
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    db_path = Path(path)
    if not db_path.is_absolute():
        db_path = REPO_DIR / db_path
    return {
        # The served sandbox queues its writers (``sandbox/common/sqlite_queued``).
        "ENGINE": "sandbox.common.sqlite_queued"
        if os.environ.get("SANDBOX_QUEUED_WRITERS")
        else "django.db.backends.sqlite3",
        "NAME": str(db_path),
        # Threads keep their connection; one gunicorn worker with many threads.
        "CONN_MAX_AGE": None,
        "OPTIONS": {
            "timeout": 30,
            # IMMEDIATE avoids the deadlock-prone read-then-upgrade lock of SQLite.
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }


DATABASES = {
    "default": _database_config(os.environ.get("SANDBOX_DATABASE_URL", "var/sandbox.sqlite3"))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The app (port 8000) and the sandbox share the host 127.0.0.1 and browsers share
# cookies across ports: distinct names keep the two sessions apart.
SESSION_COOKIE_NAME = "sandbox_sessionid"
CSRF_COOKIE_NAME = "sandbox_csrftoken"
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"

USE_TZ = True
TIME_ZONE = "UTC"
USE_I18N = False
# Pages write times as ISO 8601 UTC (sandbox/common/formats/en/formats.py).
FORMAT_MODULE_PATH = ["sandbox.common.formats"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    # 4xx answers are the simulator's job, not warnings worth a log line each.
    "loggers": {"django.request": {"level": "ERROR"}},
}
