"""``SellerSync``: one row per seller, the one place that says where their sync stands.

It holds what was spread over four tables in four apps before: the schedule (when the
next pull is due, why, the idle backoff), the pull's lease, where the orders listing
stands (cursor, an interrupted pull's resume point, orders to read again), where the
returns listing stands (watermark) and how each listing last ended, and the seller's
last "Pull now" (its rate limit).
"""

from __future__ import annotations

from django.db import models


class SellerSync(models.Model):
    seller = models.OneToOneField("sellers.Seller", on_delete=models.CASCADE, related_name="sync")

    # --- the schedule (``schedule.py``) ---
    # When the next pull is due. NULL: not scheduled (the connection is not live; a
    # reconnect makes it due again). While a pull's message is out it holds the lease's
    # end, so a lost message is sent again but two beats never send one twice.
    next_pull_at = models.DateTimeField(null=True, blank=True)
    # Why the next pull is then, in words for staff ("open orders", "idle — backing off
    # (step 3)", "failing — retry 2", "pull now" …).
    reason = models.CharField(max_length=200, blank=True)
    # Pulls in a row that found nothing open: the idle interval doubles with each.
    idle_steps = models.PositiveIntegerField(default=0)
    # When the fan-out (or Pull now) last sent the pull's message.
    queued_at = models.DateTimeField(null=True, blank=True)
    # When the schedule last started for a (re)connect (``connect.py``): a connection live
    # since then is started again.
    started_at = models.DateTimeField(null=True, blank=True)

    # --- one pull of the seller at a time: the one lease (``marketplace.outbox.lease``) ---
    claim_token = models.CharField(max_length=32, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    # --- the orders listing (``orders.services.pull``) ---
    # When the last *completed* pull asked for its first listing (our clock). The next
    # pull lists orders the seller changed after it, less PULL_CURSOR_OVERLAP.
    cursor = models.DateTimeField(null=True, blank=True)
    # An interrupted pull, resumed by the next one: the listing's own cursor of the page
    # still to read, the filter it was read with, and when that pull started.
    resume_cursor = models.TextField(blank=True)
    resume_since = models.DateTimeField(null=True, blank=True)
    resume_started_at = models.DateTimeField(null=True, blank=True)
    # Orders whose fulfillment could not be read or stored: fetched on their own next time.
    retry_numbers = models.JSONField(default=list, blank=True)

    # --- the after-sale listings (``returns.services.pull``) ---
    # Our clock at the start of the last complete returns listing: the next one asks for
    # changes strictly after it, less PULL_CURSOR_OVERLAP. Refunds have no update-time
    # filter (the open set is refund_status=CREATED).
    returns_watermark = models.DateTimeField(null=True, blank=True)
    # Each listing fails on its own: its error is kept (staff see it) and it is tried
    # again at the next pull; the other listing goes on.
    returns_error = models.TextField(blank=True)
    returns_failed_at = models.DateTimeField(null=True, blank=True)
    refunds_error = models.TextField(blank=True)
    refunds_failed_at = models.DateTimeField(null=True, blank=True)
    after_sale_finished_at = models.DateTimeField(null=True, blank=True)

    # --- how pulls ended ---
    # Pulls in a row that ended in an error (0 after a good one): retried later and later,
    # and the dashboard shows a seller whose pulls keep failing.
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    # The seller's last "Pull now" on the portal: its rate limit's clock
    # (PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS), kept here so it holds across web processes.
    pull_now_requested_at = models.DateTimeField(null=True, blank=True)

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["seller_id"]
        verbose_name = "seller sync"
        verbose_name_plural = "seller syncs"
        indexes = [
            # The fan-out's claim: due rows only, oldest first (see schedule.py).
            models.Index(
                fields=["next_pull_at"],
                condition=models.Q(next_pull_at__isnull=False),
                name="sellersync_due",
            ),
            # The overview lists sellers whose pulls keep failing.
            models.Index(
                fields=["consecutive_failures"],
                condition=models.Q(consecutive_failures__gt=0),
                name="sellersync_failing",
            ),
            # Staff's list of sellers whose returns or refunds listing failed.
            models.Index(
                fields=["seller"],
                condition=models.Q(returns_failed_at__isnull=False)
                | models.Q(refunds_failed_at__isnull=False),
                name="sellersync_after_sale_failing",
            ),
        ]

    def __str__(self) -> str:
        return f"sync of seller {self.seller_id}: next pull {self.next_pull_at} ({self.reason})"

    @property
    def is_queued(self) -> bool:
        """A pull's message was sent and that pull has not finished yet."""
        return self.queued_at is not None and (
            self.last_finished_at is None or self.queued_at > self.last_finished_at
        )
