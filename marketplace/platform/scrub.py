"""What of a platform call's body the call log may keep: secrets and buyer details scrubbed.

Every logged request and answer goes through ``scrubbed_excerpt``: JSON with the value of
every secret key (``SECRET_KEYS``) and personal key (``calllog.PERSONAL_KEYS``) replaced,
at any depth and case-blind; anything else only described, since an unreadable answer may
echo secrets in a shape no scrubber knows. ``calllog.excerpt`` then redacts token-like
values and e-mail addresses in what is kept.

A successful call keeps only the first 300 characters of its answer, so the scrubbed text
is written lazily and stops at the limit: the P1 profile spent ~5 % of a push's CPU
scrubbing and re-encoding the whole answer (the platform's copy of the order, ~2 KB) for a
300-character excerpt. The kept prefix is the same text the whole scrub would start with.
A successful order push keeps no answer at all (its sync row holds it): even the lazy
scrub was ~5 % of a push's CPU.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from marketplace.platform.calllog import PERSONAL_KEYS

# Keys whose values never reach the call log, whatever the API group: secrets, and the
# buyer's details (``calllog.PERSONAL_KEYS``; the order itself holds them).
SECRET_KEYS = frozenset(
    {
        "password",
        "token",
        "twofa_token",
        "api_key",
        "x-api-key",
        "access_token",
        "refresh_token",
        "client_secret",
    }
)
SCRUBBED = "[REDACTED]"
OMITTED = "[omitted]"
# What each scrubbed key's value becomes (lower-case keys; a secret wins over personal).
_REPLACEMENT = {
    **{key: OMITTED for key in PERSONAL_KEYS},
    **{key: SCRUBBED for key in SECRET_KEYS},
}
_encode = json.JSONEncoder(separators=(",", ":")).encode  # as json.dumps(…, separators)


def _scrubbed_value(key: str, value: Any) -> Any:
    replacement = _REPLACEMENT.get(key.lower())
    if replacement is not None:
        return replacement
    if isinstance(value, dict | list):
        return scrub_secrets(value)
    return value


def scrub_secrets(value: Any) -> Any:
    """``value`` with every secret's and buyer detail's value replaced (recursively)."""
    if isinstance(value, dict):
        return {k: _scrubbed_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_secrets(v) for v in value]
    return value


def _chunks(value: Any) -> Iterator[str]:
    """The text of ``json.dumps(scrub_secrets(value), separators=(",", ":"))``, in pieces:
    one per member of the outer object or array, each scrubbed only when it is reached (a
    reader that stops early leaves the rest untouched). Members are scrubbed and encoded
    whole: a generator step per value costs more than the C encoder saves."""
    if isinstance(value, dict):
        first = True
        for key, item in value.items():
            name = str(key)
            replacement = _REPLACEMENT.get(name.lower())
            member = replacement if replacement is not None else scrub_secrets(item)
            yield ("{" if first else ",") + _encode(name) + ":" + _encode(member)
            first = False
        yield "}" if not first else "{}"
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield ("[" if index == 0 else ",") + _encode(scrub_secrets(item))
        yield "]" if value else "[]"
    else:
        yield _encode(value)


def scrubbed_json(value: Any, *, limit: int | None = None) -> str:
    """``value`` scrubbed, as compact JSON; with ``limit``, its first ``limit`` characters
    (what is past them is never scrubbed nor written)."""
    if limit is None:
        return _encode(scrub_secrets(value))
    pieces: list[str] = []
    size = 0
    for piece in _chunks(value):
        pieces.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return "".join(pieces)[:limit]


def scrubbed_excerpt(text: str | None, *, limit: int | None = None) -> str | None:
    """A body as the call log may keep it (see the module docstring); ``limit``: only its
    first ``limit`` characters are wanted."""
    if not text:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return f"[{len(text.encode())} bytes that are not JSON]"
    return scrubbed_json(data, limit=limit)
