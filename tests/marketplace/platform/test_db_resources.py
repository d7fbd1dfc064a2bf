"""Paths of a seller's database resources: every id is one path segment."""

from __future__ import annotations

import pytest

from marketplace.platform.db_resources import segment


def test_an_id_is_quoted_into_one_path_segment() -> None:
    assert segment(12) == "12"
    assert segment("a/b?c#d%") == "a%2Fb%3Fc%23d%25"


@pytest.mark.parametrize("bad", ["", ".", ".."])
def test_an_id_that_would_move_up_a_level_is_refused(bad: str) -> None:
    # /dbs/1/exports/.. would reach /dbs/1 on a platform that normalizes paths
    with pytest.raises(ValueError, match="not a path segment"):
        segment(bad)
