"""Codes put into words on the pages: the platform's fulfillment status, and the seller's
catalog schedule (the catalog's ``schedule_words``, never the raw cron)."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from marketplace.dashboard.templatetags.dashboard import fulfillment_words, line_status_words


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("PENDING", "nothing shipped yet"),
        ("PARTIALLY_FULFILLED", "partly shipped"),
        ("COMPLETE", "every line shipped or cancelled"),
    ],
)
def test_the_fulfillments_status_codes_in_words(code: str, words: str) -> None:
    assert fulfillment_words(code) == words


def test_the_sellers_catalog_shows_its_schedule_in_words() -> None:
    page = Template('{% include "catalog/portal_listings.html" %}').render(
        Context({"source": {"has_feed": True, "cron": "0 2 * * *", "paused": False}, "counts": {}})
    )
    assert "daily at 02:00 UTC" in page
    assert "(<code>0 2 * * *</code>" not in page


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ("unfulfilled", "not shipped yet"),
        ("partially_fulfilled", "partly shipped"),
        ("fulfilled", "shipped or cancelled"),
    ],
)
def test_a_lines_fulfillment_in_words(status: str, words: str) -> None:
    assert line_status_words(status) == words
