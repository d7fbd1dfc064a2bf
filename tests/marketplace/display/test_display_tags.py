"""The shared display helpers: money with its currency for the locale, times in the
marketplace's zone with the zone's name, and the glossary's words."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.utils import translation

from marketplace import glossary
from marketplace.templatetags import display


def _render(source: str, **context: object) -> str:
    return Template("{% load display %}" + source).render(Context(context))


@pytest.fixture(autouse=True)
def _fresh_zone() -> None:
    display.marketplace_zone.cache_clear()


def test_money_is_formatted_for_the_locale_in_its_currency() -> None:
    assert _render("{{ a|money:'USD' }}", a=Decimal("1234.5")) == "$1,234.50"
    assert _render("{{ a|money:'EUR' }}", a=Decimal("12")) == "€12.00"
    # JPY has no minor unit: Babel knows, not a hand list.
    assert _render("{{ a|money:'JPY' }}", a=Decimal("1500")) == "¥1,500"
    with translation.override("fr"):
        assert display.format_money(Decimal("1234.5"), "EUR") == "1\u202f234,50\xa0€"


def test_money_keeps_an_unknown_currency_code_and_empty_amounts_stay_empty() -> None:
    assert display.format_money(Decimal("3.10"), "xqq") == "XQQ3.10"
    assert display.format_money(None, "USD") == ""


def test_times_are_in_the_marketplace_zone_with_its_name() -> None:
    moment = datetime(2026, 11, 27, 23, 30, tzinfo=UTC)
    assert _render("{{ t|local_time }}", t=moment) == "27 Nov 2026, 23:30 UTC"
    with override_settings(MARKETPLACE_TIME_ZONE="Europe/Paris"):
        display.marketplace_zone.cache_clear()
        assert _render("{{ t|local_time }}", t=moment) == "28 Nov 2026, 00:30 CET"
        assert _render("{{ t|local_date }}", t=moment) == "28 Nov 2026"
    assert _render("{{ d|local_date }}", d=date(2026, 1, 5)) == "5 Jan 2026"


def test_the_glossary_gives_plain_words_and_intervals() -> None:
    assert _render('{% term "listing_refused" %}') == "Refused"
    assert glossary.every(90) == "every 90 seconds"
    assert glossary.every(60) == "every minute"
    assert glossary.every(300) == "every 5 minutes"
    assert _render("{{ s|every }}", s=7200) == "every 2 hours"
    with pytest.raises(KeyError):
        glossary.term("no-such-term")
