"""Thresholds crossed: which sellers are over a measure's threshold, recorded once per
crossing, and the one e-mail each crossing earns.

A crossing opens on the run that first sees the seller over the threshold (on the
``PERFORMANCE_FLAG_WINDOW_DAYS`` window, with at least ``PERFORMANCE_MIN_SAMPLE`` in the
measure's denominator) and closes on the run that sees them back under. While it stays
open nothing new is written and no other e-mail goes out: a seller over a threshold for
a month hears of it once, not thirty times. A few statements per run whatever the
number of sellers (``crossings_record``): no query per seller.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from marketplace.performance.measures import MEASURES, Measure, value_text
from marketplace.performance.models import Crossing, Scorecard
from sellers.models import Seller

logger = logging.getLogger(__name__)


@dataclass
class CrossingsRecorded:
    opened: int = 0
    cleared: int = 0
    by_measure: dict[str, int] = field(default_factory=dict)  # opened, by measure


def _judged(measure: Measure, value: float | None, sample: int | None) -> bool:
    """Whether one row's value is past the measure's limit, with enough of a sample."""
    if measure.sample and (sample or 0) < int(settings.PERFORMANCE_MIN_SAMPLE):
        return False
    return measure.is_over(value)


def crossings_record(*, day: date, now: datetime) -> CrossingsRecorded:
    """Open a crossing for each seller newly over a threshold, close those back under.

    Three statements whatever the number of sellers and measures: read the day's
    flag-window rows (the columns the measures need), read the open crossings, then one
    UPDATE closing those back under and one INSERT of the new ones."""
    window = int(settings.PERFORMANCE_FLAG_WINDOW_DAYS)
    columns = sorted({m.field for m in MEASURES} | {m.sample for m in MEASURES if m.sample})
    over: dict[tuple[int, str], float] = {}
    for row in Scorecard.objects.filter(day=day, window_days=window).values("seller_id", *columns):
        for measure in MEASURES:
            value = row[measure.field]
            if _judged(measure, value, row[measure.sample] if measure.sample else None):
                over[(row["seller_id"], measure.key)] = float(value)
    still_open = {
        (seller_id, measure): pk
        for pk, seller_id, measure in Crossing.objects.filter(cleared_at__isnull=True).values_list(
            "pk", "seller_id", "measure"
        )
    }
    recorded = CrossingsRecorded()
    cleared = [pk for key, pk in still_open.items() if key not in over]
    if cleared:
        recorded.cleared = Crossing.objects.filter(pk__in=cleared).update(cleared_at=now)
    by_key = {measure.key: measure for measure in MEASURES}
    created = Crossing.objects.bulk_create(
        Crossing(
            seller_id=seller_id,
            measure=key,
            window_days=window,
            value=value,
            threshold=by_key[key].threshold,
            crossed_at=now,
        )
        for (seller_id, key), value in over.items()
        if (seller_id, key) not in still_open
    )
    recorded.opened = len(created)
    for crossing in created:
        recorded.by_measure[crossing.measure] = recorded.by_measure.get(crossing.measure, 0) + 1
    return recorded


def crossings_to_email() -> QuerySet[Crossing]:
    return Crossing.objects.filter(emailed_at__isnull=True, cleared_at__isnull=True)


def open_crossings(*, seller_id: int | None = None) -> QuerySet[Crossing]:
    crossings = Crossing.objects.filter(cleared_at__isnull=True)
    if seller_id is not None:
        crossings = crossings.filter(seller_id=seller_id)
    return crossings


def crossing_emails_send() -> int:
    """E-mail each seller their crossings not e-mailed yet: one message per seller, the
    measures it names marked sent in the same transaction. Returns the messages sent."""
    by_key = {measure.key: measure for measure in MEASURES}
    sent = 0
    with transaction.atomic():
        pending = list(
            crossings_to_email().select_for_update(skip_locked=True).order_by("seller_id", "id")
        )
        by_seller: dict[int, list[Crossing]] = defaultdict(list)
        for crossing in pending:
            by_seller[crossing.seller_id].append(crossing)
        sellers = Seller.objects.select_related("user").in_bulk(list(by_seller))
        url = settings.APP_BASE_URL + reverse("portal_performance:performance")
        for seller_id, crossings in by_seller.items():
            seller = sellers[seller_id]
            items = [
                (m, c, value_text(m, c.value), value_text(m, c.threshold))
                for c in crossings
                if (m := by_key.get(c.measure))
            ]
            body = render_to_string(
                "performance/email/crossed.txt",
                {"seller": seller, "items": items, "url": url},
            )
            subject = (
                f"Your {items[0][0].label.lower()} is over the marketplace's limit"
                if len(items) == 1
                else f"{len(items)} of your performance measures are over the marketplace's limits"
            )
            error = ""
            try:
                if seller.user.email:
                    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [seller.user.email])
                    sent += 1
                else:
                    error = "the seller has no e-mail address"
            except Exception as exc:
                # The Performance page shows the same; the crossing stays unsent for the
                # next run's task (emailed_at empty).
                logger.exception("could not e-mail performance crossings to seller %s", seller_id)
                Crossing.objects.filter(pk__in=[c.pk for c in crossings]).update(
                    email_error=str(exc)[:500]
                )
                continue
            Crossing.objects.filter(pk__in=[c.pk for c in crossings]).update(
                emailed_at=timezone.now(), email_error=error
            )
    return sent
