"""The one character rule the intake API and the catalog feed share."""

from __future__ import annotations

import unicodedata

import pytest

from marketplace.text_rules import first_refused


def test_the_fast_search_refuses_exactly_the_cc_cf_zl_zp_characters() -> None:
    for codepoint in (*range(0x10000), 0x1F600, 0x110BD, 0xE0001, 0xE007F, 0x10FFFF):
        char = chr(codepoint)
        refused = unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"}
        assert (first_refused(f"ok {char} ok") == char) == refused, hex(codepoint)


@pytest.mark.parametrize(
    ("value", "allow_lines", "found"),
    [
        ("Crème brûlée 😀", False, None),
        ("one\r\ntwo\tthree", True, None),
        ("one\ttwo", False, "\t"),
        ("ok\x00", True, "\x00"),
        ("a\u2028b", True, "\u2028"),
    ],
)
def test_free_text_may_keep_tab_and_line_breaks_only(
    value: str, allow_lines: bool, found: str | None
) -> None:
    assert first_refused(value, allow_lines=allow_lines) == found
