"""Records of the seller-side order API (v2): API users and their tokens, per-seller
settings, v2 orders with their packages, cancellations and events."""

from django.db import models

from sandbox.records.orders.models import Order, Seller

EACH_SHIPMENT = "each_shipment"
WHOLE_ORDER = "whole_order"
WORKFLOWS = (EACH_SHIPMENT, WHOLE_ORDER)


class ApiUser(models.Model):
    """A seller's order-API user: HTTP Basic credentials plus the numeric client id."""

    seller = models.ForeignKey(Seller, on_delete=models.CASCADE, related_name="api_users")
    username = models.CharField(max_length=150, unique=True)
    password_hash = models.CharField(max_length=200)
    client_id = models.CharField(max_length=20)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.username


class ApiToken(models.Model):
    user = models.ForeignKey(ApiUser, on_delete=models.CASCADE, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["user", "expires_at"], name="v2_token_active")]

    def __str__(self) -> str:
        return f"v2 token {self.id}"


class SellerSettings(models.Model):
    """The seller's v2 configuration: import schedule, PENDING option, workflow."""

    seller = models.OneToOneField(Seller, on_delete=models.CASCADE, related_name="v2_settings")
    import_interval_seconds = models.FloatField(default=60.0)
    import_pending = models.BooleanField(default=False)
    workflow = models.CharField(
        max_length=20, default=EACH_SHIPMENT, choices=[(w, w) for w in WORKFLOWS]
    )
    last_import_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"v2 settings of {self.seller_id}"


class V2Order(models.Model):
    """An order as the seller's v2 API shows it (one per marketplace-facing order)."""

    order = models.OneToOneField(Order, on_delete=models.CASCADE, related_name="v2")
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE)
    imported_at = models.DateTimeField()
    normalized_marketplace_state = models.CharField(max_length=20)
    marketplace_state_changed_at = models.DateTimeField()
    merchant_order_number = models.CharField(max_length=128, blank=True, default="")
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # NEW, READY, COMPLETE, CANCELLED, or "" (confirmed but not AWAITING_SHIPMENT).
    service_status = models.CharField(max_length=20, default="NEW")
    # [{"id", "mp_line_number", "quantity"}], fixed at import.
    lines = models.JSONField(default=list)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["seller", "service_status", "id"], name="v2_order_status"),
            models.Index(
                fields=["seller", "marketplace_state_changed_at"], name="v2_order_changed"
            ),
            models.Index(fields=["seller", "imported_at"], name="v2_order_imported"),
        ]

    def __str__(self) -> str:
        return f"v2 order {self.id}"


class Package(models.Model):
    """One fulfillment (a shipped package) of some units of some lines."""

    order = models.ForeignKey(V2Order, on_delete=models.CASCADE, related_name="packages")
    # [{"line_id", "mp_line_number", "quantity"}]
    lines = models.JSONField()
    shipped_date = models.CharField(max_length=40)  # RFC 3339 as the seller sent it
    carrier = models.CharField(max_length=100)
    tracking_number = models.CharField(max_length=200)
    tracking_url = models.CharField(max_length=2000, blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # When the workflow let the marketplace see it (null: held back).
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"package {self.id}"


class Cancellation(models.Model):
    order = models.ForeignKey(V2Order, on_delete=models.CASCADE, related_name="cancellations")
    lines = models.JSONField()
    reason = models.CharField(max_length=40)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"cancellation {self.id}"


class Event(models.Model):
    """What happened to a v2 order, in order (shown on the sandbox's order page)."""

    order = models.ForeignKey(V2Order, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=40)
    at = models.DateTimeField()
    detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} on {self.order_id}"
