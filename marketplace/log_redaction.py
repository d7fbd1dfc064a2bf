"""A logging filter that keeps OAuth secrets and e-mail addresses out of every log line.

Libraries (urllib3, Authlib, Celery) log URLs, form bodies and headers at debug
level; a bearer token or refresh token in a log aggregator is a leaked grant. An e-mail
address is a buyer's (or a seller's) personal data: a platform error that quotes one
("customer_email x@y is invalid") would otherwise reach the log and the call log, where
no erasure reaches it.
"""

from __future__ import annotations

import logging
import re

# key=value (form bodies, query strings), "key": "value" (JSON) and Bearer headers.
_KEYS = r"access_token|refresh_token|client_secret|code|password|token"
# In a query string `state` too: the OAuth callback's (`?code=…&state=…`) reaches the web
# log, and a live state lets whoever reads it finish a pending connect. Only after `?` or
# `&`: an order's or a connection's ``state=shipped`` elsewhere is no secret.
_PATTERNS = (
    re.compile(rf"(?i)\b({_KEYS})=([^&\s\"',;]+)|(?<=[?&])(state)=([^&\s\"',;#]+)"),
    re.compile(rf"(?i)([\"']({_KEYS})[\"']\s*:\s*[\"'])([^\"']+)([\"'])"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/=]+"),
)
REDACTED = "[REDACTED]"
# The usual shape of an address (RFC 5322's rarer local parts are left); the domain needs
# a dot, so ``user@host`` in a URL's netloc stays.
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
EMAIL_REDACTED = "[e-mail]"


def redact(text: str) -> str:
    """Return ``text`` with every token-like value replaced by ``[REDACTED]`` and every
    e-mail address by ``[e-mail]``."""
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1) or m.group(3)}={REDACTED}", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(4)}", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    if "@" in text:
        text = _EMAIL.sub(EMAIL_REDACTED, text)
    return text


class RedactSecretsFilter(logging.Filter):
    """Rewrites the record's rendered message; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the caller's bug, not ours to hide
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True
