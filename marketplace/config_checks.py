"""Checks on configuration values that settings.py runs at start.

A bad value stops the process with a message naming the variable; the value itself is
never echoed (it is a secret, or holds one, e.g. a password in EMAIL_URL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:  # settings import this module; Django's checks load when they run
    from django.apps import AppConfig
    from django.core.checks import CheckMessage

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
KEY_HINT = (
    'generate one with: python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())"'
)


def fernet_keys(raw: str, *, name: str) -> list[str]:
    """The comma-separated Fernet keys in ``raw``, each checked; the first encrypts."""
    keys = [part.strip() for part in raw.split(",")]
    if not any(keys):
        raise ImproperlyConfigured(f"{name} holds no key; {KEY_HINT}")
    for position, key in enumerate(keys, 1):
        if not key:
            # "a,,b" or a trailing comma: likely a key lost in editing, so say so.
            raise ImproperlyConfigured(f"{name}: entry {position} of {len(keys)} is empty")
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ImproperlyConfigured(
                f"{name}: entry {position} of {len(keys)} is not a Fernet key "
                f"(32 url-safe base64-encoded bytes); {KEY_HINT}"
            ) from None
    return keys


def production_email(*, raw_url: str, backend: str, name: str) -> None:
    """Production sends real mail: seller notices (re-authorize, expiring grants) matter."""
    if backend != SMTP_BACKEND:
        scheme = raw_url.partition(":")[0] or "(empty)"
        raise ImproperlyConfigured(
            f"{name} must be an SMTP URL in production (smtp://, smtps:// or smtp+tls://), "
            f"not {scheme}://"
        )


# --- Production refuses development values -----------------------------------------------
# The development defaults of the settings' secrets. Anyone can read them in the
# repository, so a production process running with one has no secret. They live here,
# below the settings, so the settings and these checks share one copy.
DEVELOPMENT_VALUES = {
    "SECRET_KEY": "dev-only-insecure-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
    "PLATFORM_CLIENT_ID": "demo-marketplace",
    "PLATFORM_CLIENT_SECRET": "demo-marketplace-secret",
    # Fernet key for development only; production supplies its own list.
    "TOKEN_ENCRYPTION_KEYS": "ZGV2LW9ubHktdG9rZW4ta2V5LW5vdC1mb3ItcHJvZCE=",
}


def development_values() -> dict[str, str]:
    return dict(DEVELOPMENT_VALUES)


# .env.example marks every value to replace with this placeholder.
PLACEHOLDER = "change-me"
# Settings whose values come from the environment and may hold a copied placeholder.
_PLACEHOLDER_SETTINGS = (
    "SECRET_KEY",
    "TOKEN_ENCRYPTION_KEYS",
    "PLATFORM_CLIENT_ID",
    "PLATFORM_CLIENT_SECRET",
    "PLATFORM_BASE_URL",
    "PLATFORM_API_BASE_URL",
    "PLATFORM_REDIRECT_URL",
    "APP_BASE_URL",
    "ALLOWED_HOSTS",
    "DEFAULT_FROM_EMAIL",
    "METRICS_TOKEN",
)

# /metrics answers anyone who holds this token: as long as a generated one
# (``secrets.token_urlsafe(32)`` gives 43 characters), so nobody guesses it.
METRICS_TOKEN_MIN_LENGTH = 32


def metrics_token_problem(token: str) -> str | None:
    """Why production must not serve /metrics with ``token`` (empty: the endpoint is off,
    which is safe). Names the setting, never the value."""
    if token and len(token) < METRICS_TOKEN_MIN_LENGTH:
        return (
            f"METRICS_TOKEN must be at least {METRICS_TOKEN_MIN_LENGTH} characters "
            "(or empty, which turns /metrics off)"
        )
    return None


# Base URLs production must reach over TLS: a plain http:// one would carry tokens, the
# seller's feed credentials and buyers' data in the clear. A local address (a sidecar, a
# test's sandbox) is excepted: nothing leaves the machine.
HTTPS_SETTINGS = (
    "APP_BASE_URL",
    "PLATFORM_BASE_URL",
    "PLATFORM_OAUTH_BASE_URL",
    "PLATFORM_API_BASE_URL",
    "PLATFORM_EDRTS_BASE_URL",
    "PLATFORM_REDIRECT_URL",
)
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def plain_http_problem(name: str, value: object) -> str | None:
    """Why production must not use ``value`` for ``name`` (None when it may): plain
    ``http://`` to anything but a local address. Names the setting, never the value."""
    if not isinstance(value, str) or not value:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme.lower() != "http":
        return None
    if (parts.hostname or "").lower() in LOCAL_HOSTS:
        return None
    return f"{name} must use https:// in production (plain http:// only for a local address)"


def _holds_placeholder(value: object) -> bool:
    if isinstance(value, str):
        return PLACEHOLDER in value.lower()
    if isinstance(value, dict):
        return any(_holds_placeholder(item) for item in value.values())
    if isinstance(value, list | tuple | set):
        return any(_holds_placeholder(item) for item in value)
    return False


def production_refusals(settings: object, environ: dict[str, str] | None = None) -> list[str]:
    """Why production must not start with these settings: one line per setting, naming
    the setting and never its value. Empty outside production."""
    import os

    if getattr(settings, "DJANGO_ENV", "") != "production":
        return []
    environ = dict(os.environ) if environ is None else environ
    problems: list[str] = []
    for name, value in development_values().items():
        current = getattr(settings, name, None)
        if current == value or (isinstance(current, list) and value in current):
            problems.append(f"{name} is the public development value; set your own")
    if getattr(settings, "DEBUG", False):
        problems.append("DEBUG must be false in production")
    metrics_problem = metrics_token_problem(getattr(settings, "METRICS_TOKEN", "") or "")
    if metrics_problem:
        problems.append(metrics_problem)
    for name in HTTPS_SETTINGS:
        http_problem = plain_http_problem(name, getattr(settings, name, None))
        if http_problem:
            problems.append(http_problem)
    named = {problem.split()[0] for problem in problems}
    for name in _PLACEHOLDER_SETTINGS:
        if name not in named and _holds_placeholder(getattr(settings, name, None)):
            problems.append(f"{name} still holds a '{PLACEHOLDER}' placeholder")
            named.add(name)
    for alias, database in (getattr(settings, "DATABASES", None) or {}).items():
        if _holds_placeholder(database):
            problems.append(
                f"DATABASES[{alias!r}] (DATABASE_URL) holds a '{PLACEHOLDER}' placeholder"
            )
            named.add("DATABASE_URL")
    for name in getattr(settings, "ENV_VARS", ()):
        if name not in named and _holds_placeholder(environ.get(name, "")):
            problems.append(f"{name} still holds a '{PLACEHOLDER}' placeholder")
            named.add(name)
    return problems


def production_start_check(settings: object | None = None) -> None:
    """For processes that run no system checks (gunicorn's wsgi, Celery): refuse to start."""
    if settings is None:
        from django.conf import settings as django_settings

        settings = django_settings
    problems = production_refusals(settings)
    if problems:
        raise ImproperlyConfigured("Production refuses development values: " + "; ".join(problems))


def production_system_check(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """The same refusals as Django system check errors: ``manage.py check``, ``runserver``
    and ``migrate`` stop on them."""
    from django.conf import settings
    from django.core.checks import Error

    return [
        Error(problem, id="marketplace.E001", hint="see .env.example and the README")
        for problem in production_refusals(settings)
    ]
