"""Thresholds crossed: which sellers are over a measure's threshold, recorded once per
crossing, and the one e-mail each crossing earns.

A crossing opens on the run that first sees the seller over the threshold (on the
``PERFORMANCE_FLAG_WINDOW_DAYS`` window, with at least ``PERFORMANCE_MIN_SAMPLE`` in the
measure's denominator) and closes on the run that sees them back under. While it stays
open nothing new is written and no other e-mail goes out: a seller over a threshold for
a month hears of it once, not thirty times. Per measure, two set-based statements (open
the new ones, close the cleared ones): no loop over sellers.
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


def over_threshold(measure: Measure, rows: QuerySet[Scorecard]) -> QuerySet[Scorecard]:
    """The rows of ``rows`` over ``measure``'s threshold, with enough of a sample."""
    lookup = "gt" if measure.bad == "above" else "lt"
    over = rows.filter(**{f"{measure.field}__{lookup}": measure.threshold})
    if measure.sample:
        over = over.filter(**{f"{measure.sample}__gte": int(settings.PERFORMANCE_MIN_SAMPLE)})
    return over


def crossings_record(*, day: date, now: datetime) -> CrossingsRecorded:
    """Open a crossing for each seller newly over a threshold, close those back under."""
    window = int(settings.PERFORMANCE_FLAG_WINDOW_DAYS)
    rows = Scorecard.objects.filter(day=day, window_days=window)
    recorded = CrossingsRecorded()
    for measure in MEASURES:
        over = over_threshold(measure, rows)
        still_open = Crossing.objects.filter(measure=measure.key, cleared_at__isnull=True)
        recorded.cleared += still_open.exclude(seller_id__in=over.values("seller_id")).update(
            cleared_at=now
        )
        new = over.exclude(seller_id__in=still_open.values("seller_id")).values_list(
            "seller_id", measure.field
        )
        created = Crossing.objects.bulk_create(
            Crossing(
                seller_id=seller_id,
                measure=measure.key,
                window_days=window,
                value=value,
                threshold=measure.threshold,
                crossed_at=now,
            )
            for seller_id, value in new
        )
        recorded.opened += len(created)
        recorded.by_measure[measure.key] = len(created)
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
