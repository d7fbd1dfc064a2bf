"""The display filters that put codes into words (``templatetags/dashboard.py``)."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from marketplace.dashboard.templatetags.dashboard import cron_words, fulfillment_words


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("0 2 * * *", "every day at 02:00 UTC"),
        ("15 * * * *", "every hour at minute 15"),
        ("30 6 * * 1", "every Monday at 06:30 UTC"),
        ("0 0 * * 7", "every Sunday at 00:00 UTC"),
        ("*/10 * * * *", "every 10 minutes"),
        ("0 2 1 * *", "0 2 1 * *"),  # another shape: as it is
        ("", "none"),
    ],
)
def test_cron_in_words(cron: str, words: str) -> None:
    assert cron_words(cron) == words


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
    page = Template(
        '{% include "catalog/portal_listings.html" %}'
    ).render(  # the template's own text, no view needed
        Context({"source": {"has_feed": True, "cron": "0 2 * * *", "paused": False}, "counts": {}})
    )
    assert "every day at 02:00 UTC" in page
    assert "<code>0 2 * * *</code>" not in page
