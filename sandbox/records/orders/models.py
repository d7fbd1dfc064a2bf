"""The sandbox's own records: accounts, grants, tokens, orders and what clients sent."""

from django.db import models


class Client(models.Model):
    """A marketplace registered with the platform (OAuth client)."""

    client_id = models.CharField(max_length=200, unique=True)
    secret_hash = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    redirect_url = models.CharField(max_length=2000)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.client_id


class Seller(models.Model):
    """A seller account on the platform (signs in on the authorize page)."""

    username = models.CharField(max_length=150, unique=True)
    password_hash = models.CharField(max_length=200)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.username


class Grant(models.Model):
    """One seller's authorization of one client; every approval creates a new grant."""

    client = models.ForeignKey(Client, on_delete=models.CASCADE)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=100, blank=True)
    refresh_count = models.PositiveIntegerField(default=0)
    reuse_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"grant {self.id} (seller {self.seller_id}, client {self.client_id})"


class AuthorizationCode(models.Model):
    code_hash = models.CharField(max_length=64, unique=True)
    client = models.ForeignKey(Client, on_delete=models.CASCADE)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE)
    redirect_url = models.CharField(max_length=2000)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    grant = models.ForeignKey(Grant, null=True, blank=True, on_delete=models.CASCADE)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"code {self.id}"


class Token(models.Model):
    ACCESS = "access"
    REFRESH = "refresh"

    token_hash = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=10, choices=[(ACCESS, ACCESS), (REFRESH, REFRESH)])
    grant = models.ForeignKey(Grant, on_delete=models.CASCADE, related_name="tokens")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    # Refresh tokens only: set when the token was spent by a rotating refresh.
    spent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} token {self.id}"


class Order(models.Model):
    """An order a marketplace placed into a seller's account."""

    client = models.ForeignKey(Client, on_delete=models.CASCADE)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE)
    mp_order_number = models.CharField(max_length=128)
    placed = models.JSONField()  # the order as placed (then as updated)
    marketplace_state = models.CharField(max_length=20)
    # {"<mp_line_number>": {"shipments": [...], "cancellations": [...]}}
    fulfillment = models.JSONField(default=dict)
    fulfillment_status = models.CharField(max_length=20, default="UNFULFILLED")
    acknowledged = models.BooleanField(default=False)
    is_marketplace_fulfilled = models.BooleanField(default=False)
    has_errors = models.BooleanField(default=False)
    imported_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    seller_updated_at = models.DateTimeField(null=True, blank=True)
    # seller_updated_at or imported_at: the listing's stable sort key (with id).
    sort_at = models.DateTimeField()

    class Meta:
        ordering = ["sort_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["client", "seller", "mp_order_number"], name="sandbox_order_unique_number"
            )
        ]
        indexes = [
            models.Index(
                fields=["client", "seller", "sort_at", "id"], name="sandbox_order_listing"
            ),
            models.Index(fields=["mp_order_number"], name="sandbox_order_number"),
            models.Index(fields=["marketplace_state", "updated_at"], name="sandbox_order_state"),
        ]

    def __str__(self) -> str:
        return self.mp_order_number


class OrderStateChange(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="history")
    state = models.CharField(max_length=20)
    at = models.DateTimeField()
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.state}"


class ErrorReport(models.Model):
    """A validation error a marketplace reported on the seller's fulfillment."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="errors")
    code = models.CharField(max_length=50)
    message = models.TextField()
    mp_line_number = models.CharField(max_length=128, blank=True, default="")
    debug = models.JSONField(null=True, blank=True)
    received_at = models.DateTimeField()
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.code}"


class Return(models.Model):
    """A return a marketplace created on one of its orders (``PUT …/returns/{n}``); the
    seller's v2 operations move it (orders_v2 writes these rows, the v1 views read them)."""

    AWAITING_AUTHORIZATION = "AWAITING_AUTHORIZATION"
    AUTHORIZED = "AUTHORIZED"
    REFUNDED = "REFUNDED"
    COMPLETED = "COMPLETED"
    REJECTED = "REJECTED"
    STATUSES = (AWAITING_AUTHORIZATION, AUTHORIZED, REFUNDED, COMPLETED, REJECTED)

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="returns")
    mp_return_number = models.CharField(max_length=128)
    placed = models.JSONField()  # the body as the marketplace PUT it (then as updated)
    status = models.CharField(max_length=30, default=AWAITING_AUTHORIZATION)
    rma = models.CharField(max_length=128, blank=True, default="")
    # The seller's reason, when REJECTED (reading B of ``return_refusal``; under A a refusal
    # leaves no state).
    notes = models.TextField(blank=True, default="")
    # The seller's refund: [{"mp_return_line_number", "principal_refund_amount",
    # "shipping_refund_amount"}] (decimal strings), set once.
    refund_lines = models.JSONField(default=list)
    # What the marketplace reported: [{"code", "message", "mp_return_line_number"}].
    errors = models.JSONField(default=list)
    created_at = models.DateTimeField()
    # Any change of state, amounts, RMA or errors (``updated_after``; the listing's sort key).
    updated_at = models.DateTimeField()
    # The last change of state (v2's ``marketplace_state_changed_after``/``_before``).
    state_changed_at = models.DateTimeField(null=True, blank=True)
    # Whether the marketplace read it (GET one/lists/refunds) since it reached its state.
    read_in_state = models.BooleanField(default=False)

    class Meta:
        ordering = ["updated_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "mp_return_number"], name="sandbox_return_unique_number"
            )
        ]
        indexes = [
            models.Index(fields=["updated_at", "id"], name="sandbox_return_listing"),
            models.Index(fields=["status", "updated_at"], name="sandbox_return_status"),
        ]

    def __str__(self) -> str:
        return f"return {self.mp_return_number} of {self.order_id}"


class Refund(models.Model):
    """A refund the seller posted on an order through v2 (``feedamp_refund_id`` is its id);
    the marketplace reads it on v1 and marks it complete or reports errors."""

    # The reference's three states: CREATED (ready to decide), PAUSED (the marketplace
    # reported errors; the seller resolves them and it comes back CREATED with corrected
    # lines and no active errors), COMPLETE (marked processed by the marketplace; final).
    CREATED = "CREATED"
    PAUSED = "PAUSED"
    COMPLETE = "COMPLETE"
    STATUSES = (CREATED, PAUSED, COMPLETE)

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="refunds")
    cp_refund_number = models.CharField(max_length=128, blank=True, default="")
    # The v2 lines as posted, plus "refund_line_number" and "mp_line_number".
    lines = models.JSONField()
    status = models.CharField(max_length=20, default=CREATED)
    errors = models.JSONField(default=list)  # the active errors: [{"code", "message"}]
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    read_in_state = models.BooleanField(default=False)
    # How many times the marketplace paused it, and the seller resolved it (each resolution
    # is a new version of the lines: errors judged one version never belong to the next).
    pauses = models.PositiveIntegerField(default=0)
    resolutions = models.PositiveIntegerField(default=0)
    paused_at = models.DateTimeField(null=True, blank=True)
    # The lines of earlier versions with the errors that paused each: [{"lines", "errors"}].
    history = models.JSONField(default=list)

    class Meta:
        ordering = ["updated_at", "id"]
        indexes = [
            models.Index(fields=["created_at", "id"], name="sandbox_refund_created"),
            models.Index(fields=["updated_at", "id"], name="sandbox_refund_listing"),
            models.Index(fields=["status", "updated_at"], name="sandbox_refund_status"),
        ]

    def __str__(self) -> str:
        return f"refund {self.id} of {self.order_id}"


class DriftEvent(models.Model):
    """A change made at the platform "elsewhere" (a support action, a fix on its side)
    through the control API's drift call: what changed, before and after. Such a change
    never moves the order's ``seller_updated_at``, so a cursor on it cannot see it."""

    order = models.ForeignKey(Order, on_delete=models.SET_NULL, null=True, related_name="drift")
    # Kept as text too: ``forget_order`` deletes the order the event is about.
    seller = models.CharField(max_length=150)
    client_id = models.CharField(max_length=200)
    mp_order_number = models.CharField(max_length=128)
    kind = models.CharField(max_length=40)
    # What inside the order: "order", "line 1 shipment 0", "refund 7", "return R-1".
    target = models.CharField(max_length=200)
    before = models.JSONField(null=True)
    after = models.JSONField(null=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["kind", "id"], name="sandbox_drift_kind")]

    def __str__(self) -> str:
        return f"drift {self.kind} on {self.mp_order_number}"
