"""The one character rule for text from outside: what the intake API and the catalog feed
refuse.

Control characters (Unicode Cc: a NUL makes Postgres refuse the row, the others corrupt
logs, CSV exports and the platform's copy), format characters (Cf: zero-width spaces and
joiners make a name that looks blank or like another one; bidi overrides such as U+202E
show a SKU reversed) and the line and paragraph separators (Zl U+2028, Zp U+2029: line
breaks to some readers, not to others). Free text may keep tab, line feed and carriage
return where a caller allows lines.
"""

from __future__ import annotations

import re
import unicodedata

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
LINE_CHARACTERS = frozenset("\t\n\r")
REFUSED_RULE = (
    "No control (Unicode Cc), format (Cf, e.g. zero-width or bidi characters) or line/"
    "paragraph separator (Zl, Zp) characters."
)


def char_refused(char: str) -> bool:
    return unicodedata.category(char) in REFUSED_CATEGORIES


# The refused characters of the Basic Multilingual Plane, for patterns (the intake API's
# document lists them) and a fast search; the few above it are checked one by one.
REFUSED_BMP = [codepoint for codepoint in range(0x10000) if char_refused(chr(codepoint))]


def _class(codepoints: list[int]) -> re.Pattern[str]:
    """A character class of runs (first-last): far faster to search than one of
    single characters."""
    runs: list[list[int]] = []
    for codepoint in codepoints:
        if runs and runs[-1][1] == codepoint - 1:
            runs[-1][1] = codepoint
        else:
            runs.append([codepoint, codepoint])
    body = "".join(
        re.escape(chr(start)) + ("-" + re.escape(chr(end)) if end > start else "")
        for start, end in runs
    )
    return re.compile(f"[{body}]")


# Public for the feed's row check, which searches a whole row's fields at once first.
REFUSED_SEARCH = _class(REFUSED_BMP)
REFUSED_BUT_LINES_SEARCH = _class([c for c in REFUSED_BMP if chr(c) not in LINE_CHARACTERS])

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def first_refused(value: str, *, allow_lines: bool = False) -> str | None:
    """The first refused character of ``value`` (None when it has none)."""
    found = (REFUSED_BUT_LINES_SEARCH if allow_lines else REFUSED_SEARCH).search(value)
    if found is not None:
        return found.group()
    if not value.isascii():
        for astral in _ASTRAL.finditer(value):
            if char_refused(astral.group()):
                return astral.group()
    return None
