"""The marketplace's orders, their sync state with the platform, and what the seller sent back.

* ``Order`` / ``OrderLine``: the marketplace's own record (the truth we push).
* ``OrderSync``: the outbox row, one per order, written in the same transaction as every
  order change. It says what must be pushed (``desired_version``) and what the platform
  has confirmed (``pushed_version``); the broker only wakes workers, the sweeper reads
  this table.
* ``SyncEvent``: the per-order history people read on the dashboard.
* ``Shipment`` / ``LineCancellation``: the seller's fulfillment as last pulled
  (replaced per order on every pull, so re-reading is idempotent).
* ``ValidationProblem``: a problem found in the seller's fulfillment, reported to the
  platform once (by fingerprint) and resolved when a later pull no longer shows it.
* ``ApiKey``: intake API credentials, stored as SHA-256 hashes.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models.functions import Upper

from marketplace.outbox.models import OutboxItem


class MarketplaceState(models.TextChoices):
    PENDING = "PENDING", "Pending"
    AWAITING_SHIPMENT = "AWAITING_SHIPMENT", "Awaiting shipment"
    SHIPPED = "SHIPPED", "Shipped"
    CANCELLED = "CANCELLED", "Cancelled"


class Order(models.Model):
    State = MarketplaceState

    mp_order_number = models.CharField(max_length=128, unique=True)
    seller = models.ForeignKey("sellers.Seller", on_delete=models.PROTECT, related_name="orders")
    state = models.CharField(
        max_length=20, choices=MarketplaceState.choices, default=MarketplaceState.PENDING
    )
    sales_channel = models.CharField(max_length=64)
    purchase_date = models.DateTimeField()
    currency = models.CharField(max_length=3)
    location = models.CharField(max_length=128, blank=True)

    customer_full_name = models.CharField(max_length=200)
    customer_email = models.EmailField(blank=True)
    customer_phone = models.CharField(max_length=40, blank=True)
    customer_vat = models.CharField(max_length=40, blank=True)

    ship_full_name = models.CharField(max_length=200)
    ship_address1 = models.CharField(max_length=200)
    ship_address2 = models.CharField(max_length=200, blank=True)
    ship_address3 = models.CharField(max_length=200, blank=True)
    ship_city = models.CharField(max_length=100)
    ship_state = models.CharField(max_length=100, blank=True)
    ship_postal_code = models.CharField(max_length=20, blank=True)
    ship_country_code = models.CharField(max_length=3, help_text="ISO 3166 alpha-3")
    ship_country_code_iso2 = models.CharField(max_length=2, blank=True)
    ship_address_type = models.CharField(max_length=20, blank=True)
    ship_phone = models.CharField(max_length=40, blank=True)

    earliest_ship_date = models.DateTimeField(null=True, blank=True)
    latest_ship_date = models.DateTimeField(null=True, blank=True)
    earliest_delivery_date = models.DateTimeField(null=True, blank=True)
    latest_delivery_date = models.DateTimeField(null=True, blank=True)
    delivery_notes = models.TextField(blank=True)

    # SHA-256 of the canonical intake body: a repeated create with the same body is
    # idempotent, a different body under the same number is a conflict.
    intake_fingerprint = models.CharField(max_length=64, editable=False)
    # The platform's view of the seller's fulfillment, from the last pull.
    fulfillment_status = models.CharField(max_length=32, blank=True)
    fulfillment_digest = models.CharField(max_length=64, blank=True, editable=False)
    # The listing's seller_updated_at when we last read the fulfillment: a re-listed order
    # with the same value has nothing new (the cursor overlap re-lists on purpose).
    platform_seller_updated_at = models.DateTimeField(null=True, blank=True)
    fulfillment_pulled_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["state"], name="order_state"),
            models.Index(fields=["seller", "-created_at"], name="order_seller_recent"),
            # "Has this seller open orders?" (the pull schedule asks after every pull): a
            # partial index holds only unsettled orders, so the answer costs the same
            # however many settled orders the seller has.
            models.Index(
                fields=["seller"],
                condition=models.Q(
                    state__in=[MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT]
                ),
                name="order_open_by_seller",
            ),
            # Open orders placed lately: the sync's tick brings their sellers back to the
            # short pull interval (marketplace/sync/schedule.py), reading only new ones.
            models.Index(
                fields=["created_at"],
                condition=models.Q(
                    state__in=[MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT]
                ),
                name="order_open_recent",
            ),
            # The staff orders list: newest placed first (its default sort, paged), and by
            # ship-by date (its sort, and the "late" filter's range).
            models.Index(fields=["-purchase_date", "-id"], name="order_placed_recent"),
            models.Index(fields=["latest_ship_date", "id"], name="order_ship_by"),
            # A buyer's orders by e-mail (privacy: erasure and data export,
            # ``customer_email__iexact``): Postgres compares ``UPPER(customer_email::text)``,
            # so the index holds that expression (a plain one on the column is not used).
            models.Index(Upper("customer_email"), name="order_customer_email_upper"),
        ]

    def __str__(self) -> str:
        return self.mp_order_number


class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    mp_line_number = models.CharField(max_length=128)
    sku = models.CharField(max_length=128)
    product_name = models.CharField(max_length=300)
    quantity = models.PositiveIntegerField()
    unit_price = models.DecimalField(max_digits=12, decimal_places=2)
    shipping_method = models.CharField(max_length=64, blank=True)
    shipping_price = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0"))
    taxes = models.JSONField(default=list, blank=True)
    discounts = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "mp_line_number"], name="orderline_unique_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.order_id}/{self.mp_line_number}"


class SyncStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SYNCED = "synced", "Synced"
    RETRYING = "retrying", "Retrying"
    FAILED = "failed", "Failed"
    WAITING_FOR_CONNECTION = "waiting_for_connection", "Waiting for connection"


class OrderSync(OutboxItem):
    """The outbox row of one order: what must reach the platform and how it is going
    (the order push kind of ``marketplace.outbox``; the engine's fields come from
    ``OutboxItem``: attempts and failures of the current version, next attempt, claim)."""

    Status = SyncStatus

    order = models.OneToOneField(Order, on_delete=models.CASCADE, related_name="sync")
    status = models.CharField(max_length=32, choices=SyncStatus.choices, default=SyncStatus.PENDING)
    # Bumped with every order change that must be pushed; the platform has what we
    # meant once pushed_version == desired_version.
    desired_version = models.PositiveIntegerField(default=1)
    pushed_version = models.PositiveIntegerField(default=0)
    # The version the live claim is pushing.
    claimed_version = models.PositiveIntegerField(default=0)
    last_payload = models.JSONField(null=True, blank=True)
    last_response = models.TextField(blank=True)
    last_pushed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="ordersync_due"),
            models.Index(fields=["next_attempt_at"], name="ordersync_next_attempt"),
            # The dashboard's "failed orders" list, newest first: a small partial index
            # (only dead letters), so the list reads 10 rows however many orders exist.
            # Its predicate names next_attempt_at too (always NULL on failed rows) so that
            # only that list's query implies it: with status alone, Postgres used it for
            # the sellers list's per-seller failure counts too, scanning every dead letter
            # once per seller (P4: 1 ms per seller row).
            models.Index(
                fields=["-updated_at"],
                condition=models.Q(status=SyncStatus.FAILED, next_attempt_at__isnull=True),
                name="ordersync_failed_recent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.status} v{self.pushed_version}/{self.desired_version}"

    @property
    def is_up_to_date(self) -> bool:
        return self.pushed_version >= self.desired_version


class SyncEventKind(models.TextChoices):
    QUEUED = "queued", "Queued"
    PUSHED = "pushed", "Pushed"
    PUSH_FAILED = "push_failed", "Push failed"
    RETRY_SCHEDULED = "retry_scheduled", "Retry scheduled"
    WAITING_FOR_CONNECTION = "waiting_for_connection", "Waiting for connection"
    RELEASED = "released", "Released after reconnect"
    PULLED = "pulled", "Fulfillment pulled"
    FULFILLMENT_STORED = "fulfillment_stored", "Fulfillment stored"
    PROBLEM_REPORTED = "problem_reported", "Problem reported"
    PROBLEM_RESOLVED = "problem_resolved", "Problem resolved"
    SETTLED = "settled", "Settled"
    ADMIN_RETRY = "admin_retry", "Retried by an admin"


class SyncEvent(models.Model):
    Kind = SyncEventKind

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="sync_events")
    kind = models.CharField(max_length=32, choices=SyncEventKind.choices)
    version = models.PositiveIntegerField(null=True, blank=True)
    message = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)
    actor = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["order", "-created_at"], name="syncevent_order_recent")]

    def __str__(self) -> str:
        return f"{self.order_id} {self.kind}"


class Shipment(models.Model):
    line = models.ForeignKey(OrderLine, on_delete=models.CASCADE, related_name="shipments")
    quantity = models.PositiveIntegerField()
    carrier = models.CharField(max_length=64, blank=True)
    tracking_number = models.CharField(max_length=128, blank=True)
    tracking_url = models.CharField(max_length=2000, blank=True)
    shipped_date = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["line_id", "id"]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.line_id} via {self.carrier} {self.tracking_number}"


class LineCancellation(models.Model):
    line = models.ForeignKey(OrderLine, on_delete=models.CASCADE, related_name="cancellations")
    quantity = models.PositiveIntegerField()
    reason = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["line_id", "id"]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.line_id} cancelled ({self.reason})"


class ValidationProblem(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="problems")
    code = models.CharField(max_length=40)
    mp_line_number = models.CharField(max_length=128, blank=True)
    message = models.TextField()
    detail = models.JSONField(default=dict, blank=True)
    # Identifies "the same problem" across pulls: reported once, resolved when gone.
    fingerprint = models.CharField(max_length=64)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    reported_at = models.DateTimeField(null=True, blank=True)
    report_error = models.TextField(blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "fingerprint"], name="validationproblem_unique_fingerprint"
            )
        ]
        indexes = [
            models.Index(fields=["order", "resolved_at"], name="problem_open"),
            models.Index(fields=["reported_at"], name="problem_reported"),
        ]

    def __str__(self) -> str:
        return f"{self.order_id} {self.code} {self.mp_line_number}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class ApiKey(models.Model):
    name = models.CharField(max_length=100, unique=True)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a key")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"
        verbose_name_plural = "API keys"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
