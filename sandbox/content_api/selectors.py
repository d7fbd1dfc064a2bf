"""The one reading of the Content API's ``selector`` the sandbox takes (the reference names
the parameter, "the query selector to filter data by", and not its syntax):

    [field] equal "value"  ( OR [field] equal "value" )*

``OR`` in capitals between clauses; a value in double quotes, a quote or backslash in it
escaped with a backslash. Anything else is refused 400 and counted (``content_query``): a
client building another syntax would depend on a stand-in's guess.
"""

import re

_CLAUSE = re.compile(r'\s*\[([A-Za-z0-9_]+)\]\s+equal\s+"((?:[^"\\]|\\.)*)"\s*')
_OR = re.compile(r"\s*OR\s*")


class SelectorError(ValueError):
    pass


def selector_parse(text: str) -> list[tuple[str, str]]:
    """The (field, value) pairs a selector names; any one of them selects a row."""
    clauses: list[tuple[str, str]] = []
    position = 0
    while True:
        match = _CLAUSE.match(text, position)
        if match is None:
            raise SelectorError(f"selector not understood at {position}: {text[position:][:40]!r}")
        clauses.append((match.group(1), re.sub(r"\\(.)", r"\1", match.group(2))))
        position = match.end()
        if position == len(text):
            return clauses
        joined = _OR.match(text, position)
        if joined is None or joined.end() == position:
            raise SelectorError(f"expected OR at {position}")
        position = joined.end()
