"""JSON for people: indented, and honest about excerpts that were cut short.

Stored answers are excerpts (``push.RESPONSE_EXCERPT_CHARS``, the call log's
limits), so a long answer is JSON cut mid-way that ``json.loads`` refuses. Shown raw it
was one unwrapped line; here it is re-indented token by token and flagged as truncated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

INDENT = "  "


@dataclass(frozen=True)
class JsonText:
    text: str
    truncated: bool = False
    chars: int = 0  # characters kept, when truncated

    def __bool__(self) -> bool:
        return bool(self.text)

    def __str__(self) -> str:
        return self.text


def _reindent(fragment: str) -> str:
    """Indent JSON that may stop anywhere (even inside a string): breaks after ``{ [ ,``
    and before ``} ]`` outside strings, like ``json.dumps(indent=2)`` for whole JSON."""
    out: list[str] = []
    depth = 0
    in_string = escaped = False
    for char in fragment:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char.isspace():
            continue
        if char == '"':
            in_string = True
            out.append(char)
        elif char in "{[":
            depth += 1
            out.append(char + "\n" + INDENT * depth)
        elif char in "}]":
            depth = max(depth - 1, 0)
            out.append("\n" + INDENT * depth + char)
        elif char == ",":
            out.append(",\n" + INDENT * depth)
        elif char == ":":
            out.append(": ")
        else:
            out.append(char)
    return "".join(out)


def json_for_people(value: Any) -> JsonText:
    """Indented JSON; a cut-off JSON excerpt re-indented and marked; other text as it is."""
    if value in (None, ""):
        return JsonText("")
    if not isinstance(value, str):
        return JsonText(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    try:
        parsed = json.loads(value)
    except ValueError:
        if value.lstrip()[:1] in ("{", "["):
            return JsonText(_reindent(value) + "\n…", truncated=True, chars=len(value))
        return JsonText(value)
    return JsonText(json.dumps(parsed, indent=2, ensure_ascii=False, default=str))
