"""How money, times and words are shown on every page (seller portal and staff
dashboard): ``{% load display %}``.

- ``{{ amount|money:currency }}``: the amount in that currency, formatted for the page's
  locale by Babel (symbol, separators and the currency's own minor unit: JPY has none).
- ``{{ moment|local_time }}`` / ``{{ moment|local_date }}``: in the marketplace's time zone
  (``MARKETPLACE_TIME_ZONE``), always with the zone's name, so nobody guesses.
- ``{% term "key" %}`` and ``{{ seconds|every }}``: the plain words of
  ``marketplace/glossary.py``.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from zoneinfo import ZoneInfo

from babel.core import UnknownLocaleError
from babel.numbers import UnknownCurrencyError, format_currency
from django import template
from django.conf import settings
from django.utils import timezone, translation

from marketplace import glossary

register = template.Library()


@cache
def marketplace_zone() -> ZoneInfo:
    return ZoneInfo(settings.MARKETPLACE_TIME_ZONE)


def _locale() -> str:
    return translation.to_locale(translation.get_language() or settings.LANGUAGE_CODE)


def format_money(amount: object, currency: str) -> str:
    """``amount`` in ``currency`` for the current locale ("$1,234.50", "1 234,50 €").
    An empty amount shows as an empty string; an unknown currency keeps its code."""
    if amount is None or amount == "":
        return ""
    try:
        value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    except InvalidOperation:
        return str(amount)
    code = (currency or "").upper()
    try:
        return format_currency(value, code, locale=_locale())
    except (UnknownCurrencyError, UnknownLocaleError, ValueError):
        return f"{value} {code}".strip()


def to_marketplace_time(moment: datetime) -> datetime:
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_default_timezone())
    return moment.astimezone(marketplace_zone())


def format_time(moment: datetime | None) -> str:
    """``27 Nov 2026, 16:04 CET``: the marketplace's zone, named."""
    if moment is None:
        return ""
    local = to_marketplace_time(moment)
    return f"{local.day} {local:%b %Y, %H:%M} {local.tzname()}"


@register.filter(name="money")
def money_filter(amount: object, currency: str) -> str:
    return format_money(amount, currency)


@register.filter
def local_time(moment: datetime | None) -> str:
    return format_time(moment)


@register.filter
def local_date(moment: datetime | date | None) -> str:
    """A date; a moment is first moved to the marketplace's zone (a late-evening UTC time
    is the next day in Tokyo)."""
    if moment is None:
        return ""
    if isinstance(moment, datetime):
        moment = to_marketplace_time(moment).date()
    return f"{moment.day} {moment:%b %Y}"


@register.simple_tag
def time_zone_name() -> str:
    """The zone's name for a heading or a form label ("Times are in Europe/Paris")."""
    return settings.MARKETPLACE_TIME_ZONE


@register.simple_tag
def term(key: str) -> str:
    return glossary.term(key)


@register.filter
def every(seconds: int | None) -> str:
    return glossary.every(int(seconds or 0))
