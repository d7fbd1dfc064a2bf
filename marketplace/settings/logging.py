"""Logging: one console handler whose filter keeps tokens, codes and secrets out."""

from __future__ import annotations

from typing import Any

from marketplace.settings.base import env

LOG_LEVEL: str = env.str("LOG_LEVEL", default="INFO")
LOGGING: dict[str, Any] = {  # logging.config.dictConfig's schema
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
