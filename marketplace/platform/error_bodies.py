"""A message (and an error code) from any JSON error body the platform's APIs use.

The platform's groups answer errors in several shapes, and a strict run found ours read
only some (``{"errors": [{"message": …}]}`` was stored as "answered 400 without a
message"). Read here:

* ``{"message": …}`` and ``{"status": "fail", "message": …}`` (Platform API, EDRTS);
* ``{"error": code, "error_description": …}`` (OAuth, RFC 6749);
* ``{"errors": [{"message": …} | {"code": …} | "text", …]}`` and ``{"errors": {…}}``;
* ``{"error": {"message": …, "code": …}}``;
* a bare list of errors, ``[{"message": …}, …]``;
* ``detail`` (a common framework default).

Only these keys are read: any other field may echo what we sent (a token), so a body
without them is described by the caller (status, size, type), never quoted.
"""

from __future__ import annotations

import re
from typing import Any

MESSAGE_KEYS = ("error_description", "message", "detail", "description", "title")
LIST_KEYS = ("errors", "error")
MAX_MESSAGES = 3
MAX_DEPTH = 3
_ERROR_CODE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def _code(value: Any) -> str | None:
    return value if isinstance(value, str) and _ERROR_CODE.match(value) else None


def _messages(data: Any, depth: int = 0) -> list[str]:
    """The human messages ``data`` holds, most specific first (at most MAX_MESSAGES)."""
    if depth > MAX_DEPTH:
        return []
    if isinstance(data, str):
        return [data] if data.strip() else []
    if isinstance(data, list):
        found: list[str] = []
        for item in data:
            found += _messages(item, depth + 1)
            if len(found) >= MAX_MESSAGES:
                break
        return found[:MAX_MESSAGES]
    if not isinstance(data, dict):
        return []
    for key in MESSAGE_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return [value]
    for key in LIST_KEYS:
        value = data.get(key)
        if isinstance(value, list | dict):
            nested = _messages(value, depth + 1)
            if nested:
                return nested
    if isinstance(data.get("errors"), str) and data["errors"].strip():
        return [data["errors"]]
    # An error item with only a code still says something: name it.
    code = _code(data.get("code"))
    if code is not None:
        return [code]
    if isinstance(data.get("error"), str) and data["error"].strip():
        return [data["error"]]
    if depth and data and all(isinstance(v, list | str) for v in data.values()):
        # {"errors": {"field": ["must be …"]}}: field-keyed messages.
        return [f"{k}: {'; '.join(_messages(v, depth + 1))}" for k, v in data.items()][
            :MAX_MESSAGES
        ]
    return []


def _first_code(data: Any, depth: int = 0) -> str | None:
    """The error code: a top-level ``error`` or ``code``, else the first nested one."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(data, list):
        for item in data:
            code = _first_code(item, depth + 1)
            if code is not None:
                return code
        return None
    if not isinstance(data, dict):
        return None
    for key in ("error", "code"):
        code = _code(data.get(key))
        if code is not None:
            return code
    for key in LIST_KEYS:
        value = data.get(key)
        if isinstance(value, list | dict):
            code = _first_code(value, depth + 1)
            if code is not None:
                return code
    return None


def error_body_parts(data: Any) -> tuple[list[str], str | None]:
    """(messages, code) read from a decoded JSON error body; ``([], None)`` when it holds
    neither."""
    return _messages(data), _first_code(data)
