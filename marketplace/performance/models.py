"""The stored figures of the seller scorecards, and the threshold crossings.

* ``Scorecard``: one row per seller, window (7, 30 or 90 days) and day: the counts each
  measure is made of and the measure itself, as the refresh job computed them that day
  (``refresh.py``). The day's rows are rewritten by every run of that day; earlier days
  stay as they were, so the rows of one seller and window are the measure's trend. Pages
  read these rows, never the orders.
* ``Crossing``: a seller over a measure's threshold, from the run that saw it cross until
  the run that saw it back under (``cleared_at``). Open crossings flag the seller; each is
  e-mailed once (``emailed_at``).
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models.expressions import Combinable


def _money() -> models.DecimalField[Decimal | Combinable, Decimal]:
    """A sum of amounts (any currency's minor unit fits in 3 places)."""
    return models.DecimalField(max_digits=16, decimal_places=3, default=Decimal("0"))


class Scorecard(models.Model):
    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="+")
    window_days = models.PositiveSmallIntegerField()
    # The UTC day of the run that wrote the row; the window ends at computed_at.
    day = models.DateField()
    computed_at = models.DateTimeField()

    # Orders placed in the window (by purchase date).
    orders = models.PositiveIntegerField(default=0)
    # Shipping: orders whose shipping was due or done, those shipped late (or still unshipped
    # after their ship-by day), those with a dated shipment, their tracking problems.
    ship_due = models.PositiveIntegerField(default=0)
    shipped_late = models.PositiveIntegerField(default=0)
    late_rate = models.FloatField(null=True, blank=True)
    shipped = models.PositiveIntegerField(default=0)
    tracking_invalid = models.PositiveIntegerField(default=0)
    valid_tracking_rate = models.FloatField(null=True, blank=True)
    seller_cancelled = models.PositiveIntegerField(default=0)
    cancel_rate = models.FloatField(null=True, blank=True)
    ship_days_median = models.FloatField(null=True, blank=True)
    ship_days_p90 = models.FloatField(null=True, blank=True)
    # After sale, of the window's orders.
    order_amount = _money()
    refunded_orders = models.PositiveIntegerField(default=0)
    refund_rate = models.FloatField(null=True, blank=True)
    refund_amount = _money()
    refund_amount_rate = models.FloatField(null=True, blank=True)
    refunds = models.PositiveIntegerField(default=0)
    refunds_paused = models.PositiveIntegerField(default=0)
    paused_refund_rate = models.FloatField(null=True, blank=True)
    returned_orders = models.PositiveIntegerField(default=0)
    return_rate = models.FloatField(null=True, blank=True)
    return_amount = _money()
    return_amount_rate = models.FloatField(null=True, blank=True)
    # Returns requested in the window still waiting for the seller's authorization.
    returns_waiting = models.PositiveIntegerField(default=0)
    returns_overdue = models.PositiveIntegerField(default=0)
    oldest_waiting_request = models.DateField(null=True, blank=True)
    # Returns requested in the window that the seller authorized (``Return.authorized_at``),
    # and the days they waited for it: median and 90th percentile.
    returns_authorized = models.PositiveIntegerField(default=0)
    authorization_days_median = models.FloatField(null=True, blank=True)
    authorization_days_p90 = models.FloatField(null=True, blank=True)
    # Catalog feed runs received in the window.
    feed_runs = models.PositiveIntegerField(default=0)
    listing_rows = models.PositiveIntegerField(default=0)
    listing_refused = models.PositiveIntegerField(default=0)
    listing_refusal_rate = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["seller_id", "window_days", "day"]
        constraints = [
            models.UniqueConstraint(
                fields=["seller", "window_days", "day"], name="scorecard_seller_window_day"
            )
        ]
        indexes = [
            # The latest day (pages, metrics) and the prune of old days.
            models.Index(fields=["day"], name="scorecard_day"),
        ]

    def __str__(self) -> str:
        return f"seller {self.seller_id}, {self.window_days} days to {self.day}"


class Crossing(models.Model):
    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="+")
    measure = models.CharField(max_length=32)
    window_days = models.PositiveSmallIntegerField()
    value = models.FloatField()
    threshold = models.FloatField()
    crossed_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    email_error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-crossed_at", "-id"]
        constraints = [
            # At most one open crossing per seller and measure: a seller who stays over the
            # threshold day after day keeps the one row (and got the one e-mail).
            models.UniqueConstraint(
                fields=["seller", "measure"],
                condition=models.Q(cleared_at__isnull=True),
                name="crossing_one_open",
            )
        ]
        indexes = [
            models.Index(fields=["measure", "cleared_at"], name="crossing_measure_open"),
            models.Index(
                fields=["crossed_at"],
                condition=models.Q(emailed_at__isnull=True, cleared_at__isnull=True),
                name="crossing_to_email",
            ),
        ]

    def __str__(self) -> str:
        return f"seller {self.seller_id} over {self.measure} since {self.crossed_at:%Y-%m-%d}"
