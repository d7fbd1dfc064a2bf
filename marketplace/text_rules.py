"""The character rules for text from outside: what the intake API refuses, and what the
catalog feed corrects or refuses.

Control characters (Unicode Cc: a NUL makes Postgres refuse the row, the others corrupt
logs, CSV exports and the platform's copy), format characters (Cf: zero-width spaces and
joiners make a name that looks blank or like another one; bidi overrides such as U+202E
show a SKU reversed) and the line and paragraph separators (Zl U+2028, Zp U+2029: line
breaks to some readers, not to others). Free text may keep tab, line feed and carriage
return where a caller allows lines.

The catalog feed is the seller's own database exported: its titles carry tabs, stray line
breaks and non-breaking spaces all the time, and losing the product for it is the worst
answer. So in a feed's single-line field a run of such spacing (tab, CR, LF, the other
Unicode space separators Zs, U+2028/U+2029) becomes one space (``feed_spacing_fix``), and
only what can do harm refuses the row (``FEED_HARMFUL``: NUL and the other C0 controls but
tab and line breaks, DEL, and the bidi overrides and isolates U+202A-202E, U+2066-2069,
which show a SKU or a title reversed).
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


# --- The catalog feed's rules -------------------------------------------------------------

_HARMFUL_CODEPOINTS = [
    *(c for c in range(0x20) if chr(c) not in LINE_CHARACTERS),
    0x7F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
]
FEED_HARMFUL = frozenset(chr(c) for c in _HARMFUL_CODEPOINTS)
# What a single-line field's spacing run may hold: ordinary spaces, tab and line breaks,
# every other space separator (Zs: NBSP, the en/em/thin spaces, ideographic space...) and
# the line and paragraph separators.
_SPACING_CODEPOINTS = sorted(
    {ord(c) for c in LINE_CHARACTERS}
    | {c for c in range(0x10000) if unicodedata.category(chr(c)) in {"Zs", "Zl", "Zp"}}
)
# Spacing that is not the plain space: what a single-line field has corrected.
_ODD_SPACING = [c for c in _SPACING_CODEPOINTS if c != 0x20]
FEED_HARMFUL_SEARCH = _class(_HARMFUL_CODEPOINTS)
# The fast test of a whole row's single-line text: anything to refuse or correct.
FEED_SINGLE_SUSPECT = _class(sorted({*_HARMFUL_CODEPOINTS, *_ODD_SPACING}))
# A run of spacing holding at least one odd character (plain double spaces stay as they
# are: nothing is wrong with them, and they are not worth a warning).
_ODD_RUN = re.compile(
    " *" + _class(_ODD_SPACING).pattern + _class(_SPACING_CODEPOINTS).pattern + "*"
)
_NAMES = {"\t": "tab", "\n": "line feed", "\r": "carriage return", "\xa0": "no-break space"}


def feed_harmful(value: str) -> str | None:
    """The first character of ``value`` that refuses a feed row (None when it has none)."""
    found = FEED_HARMFUL_SEARCH.search(value)
    return found.group() if found is not None else None


def feed_spacing_fix(value: str) -> tuple[str, str]:
    """``value`` with each run of odd spacing made one space, and what was found (e.g.
    "tab, no-break space"; "" when nothing was changed)."""
    found: list[str] = []

    def one_space(match: re.Match[str]) -> str:
        for char in match.group():
            if char != " ":
                name = _NAMES.get(char) or f"U+{ord(char):04X} {unicodedata.name(char, '')}"
                if name.strip() not in found:
                    found.append(name.strip())
        return " "

    fixed = _ODD_RUN.sub(one_space, value)
    return fixed, ", ".join(found)
