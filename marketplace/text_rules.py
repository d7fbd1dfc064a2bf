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

import unicodedata

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
LINE_CHARACTERS = frozenset("\t\n\r")
REFUSED_RULE = (
    "No control (Unicode Cc), format (Cf, e.g. zero-width or bidi characters) or line/"
    "paragraph separator (Zl, Zp) characters."
)


def char_refused(char: str) -> bool:
    return unicodedata.category(char) in REFUSED_CATEGORIES


def first_refused(value: str, *, allow_lines: bool = False) -> str | None:
    """The first refused character of ``value`` (None when it has none)."""
    # Fast path: printable ASCII has none of them.
    if value.isascii() and value.isprintable():
        return None
    for char in value:
        if allow_lines and char in LINE_CHARACTERS:
            continue
        if unicodedata.category(char) in REFUSED_CATEGORIES:
            return char
    return None
