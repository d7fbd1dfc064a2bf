"""The sellers' catalog from the platform: the marketplace's API access, each seller's
platform database and feed, the feed runs, and the listings they produce."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from marketplace.outbox.models import OutboxItem
from sellers import vault


class PlatformApiAccess(models.Model):
    """The marketplace's API user at the platform (one row: ``pk=1``).

    The API token is stored only as Fernet ciphertext (``sellers.vault``) and never
    rendered; pages show its name and fingerprint. A 401 from any Platform call moves the
    access to ``needs_sign_in`` until staff sign in again.
    """

    class State(models.TextChoices):
        NOT_SIGNED_IN = "not_signed_in", "Not signed in"
        CODE_SENT = "code_sent", "Waiting for the e-mailed code"
        ACTIVE = "active", "Signed in"
        NEEDS_SIGN_IN = "needs_sign_in", "Needs sign-in"

    state = models.CharField(max_length=20, choices=State.choices, default=State.NOT_SIGNED_IN)
    username = models.CharField(max_length=200, blank=True)
    token_ciphertext = vault.EncryptedTextField(blank=True, default="", editable=False)
    token_name = models.CharField(max_length=200, blank=True)
    code_sent_at = models.DateTimeField(null=True, blank=True)
    signed_in_at = models.DateTimeField(null=True, blank=True)
    signed_in_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    needs_sign_in_since = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "platform API access"
        verbose_name_plural = "platform API access"

    def __str__(self) -> str:
        return f"{self.username or 'API access'}: {self.get_state_display()}"

    def __repr__(self) -> str:
        return f"<PlatformApiAccess user={self.username!r} state={self.state}>"

    @property
    def token(self) -> str:
        return vault.token_decrypt(self.token_ciphertext)

    @property
    def token_decryptable(self) -> bool:
        return vault.token_decryptable(self.token_ciphertext)

    @property
    def token_fingerprint(self) -> str:
        if not self.token_ciphertext or not self.token_decryptable:
            return ""
        return vault.token_fingerprint(self.token)

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE and bool(self.token_ciphertext)


class ApiSignIn(models.Model):
    """One pending sign-in of the API user: the password was accepted and the platform
    e-mailed a code. The code is sent once per pending sign-in (a row lock serializes
    submissions: a double click makes one login call) and at most ``MAX_WRONG_CODES``
    wrong codes are tried before the sign-in is dropped and staff start again."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for the code"
        SIGNED_IN = "signed_in", "Signed in"
        DROPPED = "dropped", "Dropped"

    key = models.CharField(max_length=64, unique=True)
    username = models.CharField(max_length=200)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    wrong_codes = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API sign-in"
        verbose_name_plural = "API sign-ins"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"sign-in of {self.username}: {self.get_state_display()}"


class CatalogSource(models.Model):
    """Which platform database feeds a seller's catalog, and the feed (export) made for it.

    The feed password is stored only as a SHA-256 hash: the platform holds the password
    (it needs it to deliver), we only check it. ``feed_key`` names the receiving URL.
    ``export_cleanup_id`` is an export that a failed set-up could not delete at the
    platform (the delete failed, or the access needed sign-in): the sweep keeps trying.
    """

    class FeedState(models.TextChoices):
        NONE = "none", "No feed"
        ACTIVE = "active", "Feed set up"

    seller = models.OneToOneField(
        "sellers.Seller", on_delete=models.CASCADE, related_name="catalog_source"
    )
    account_id = models.CharField(max_length=64)
    account_name = models.CharField(max_length=200, blank=True)
    db_id = models.CharField(max_length=64)
    db_name = models.CharField(max_length=200, blank=True)
    linked_at = models.DateTimeField(null=True, blank=True)
    linked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    feed_state = models.CharField(max_length=10, choices=FeedState.choices, default=FeedState.NONE)
    export_id = models.CharField(max_length=64, blank=True)
    export_cleanup_id = models.CharField(max_length=64, blank=True)
    feed_key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    feed_username = models.CharField(max_length=100, blank=True)
    feed_password_hash = models.CharField(max_length=64, blank=True, editable=False)
    file_name = models.CharField(max_length=200, blank=True)
    # [[listing column, seller's field], ...] in column order.
    export_fields = models.JSONField(default=list, blank=True)
    delimiter = models.CharField(max_length=12, default="comma")
    compression = models.CharField(max_length=8, default="gzip", blank=True)
    cron = models.CharField(max_length=64, blank=True)
    paused = models.BooleanField(default=False)
    provisioned_at = models.DateTimeField(null=True, blank=True)
    run_requested_at = models.DateTimeField(null=True, blank=True)
    # The platform's view of the feed (its status and last run log), read periodically.
    platform_status = models.CharField(max_length=100, blank=True)
    platform_last_log = models.JSONField(default=dict, blank=True)
    # The last failed staff action on the feed, with the platform's message.
    last_error = models.CharField(max_length=500, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["seller_id"]
        indexes = [
            models.Index(fields=["feed_state"], name="catsource_feed_state_idx"),
            # The clean-up sweep reads the exports failed set-ups left behind.
            models.Index(fields=["export_cleanup_id"], name="catsource_cleanup_idx"),
        ]

    def __str__(self) -> str:
        return f"seller {self.seller_id}: db {self.db_id}"

    @property
    def has_feed(self) -> bool:
        return self.feed_state == self.FeedState.ACTIVE and bool(self.export_id)


class FeedRun(models.Model):
    """One delivered feed file and its ingestion."""

    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        INGESTING = "ingesting", "Ingesting"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        # A full feed that would deactivate more than FEED_MAX_DEACTIVATE_SHARE of the
        # catalog: nothing applied until staff confirm it.
        HELD = "held", "Held"

    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="feed_runs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RECEIVED)
    received_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Where the file is in the "catalog_feeds" storage, and how to read it.
    file_path = models.CharField(max_length=300)
    file_bytes = models.PositiveBigIntegerField(default=0)
    compression = models.CharField(max_length=8, blank=True)
    delimiter = models.CharField(max_length=12, default="comma")
    full_feed = models.BooleanField(default=True)
    rows = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    deactivated = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    # [{"line", "sku", "reason"}, ...], the first REJECTIONS_KEPT of them.
    rejections = models.JSONField(default=list, blank=True)
    # Single-line fields whose odd spacing (tab, line break, no-break space...) was made one
    # space: how many, and the first of them [{"line", "field", "found"}, ...].
    corrected = models.PositiveIntegerField(default=0)
    corrections = models.JSONField(default=list, blank=True)
    error = models.CharField(max_length=500, blank=True)
    # Failed because the file itself is malformed: its file is kept only
    # FEED_FAILED_FILE_RETENTION_HOURS (retention.py), not a good file's days.
    malformed = models.BooleanField(default=False)
    retried_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who confirmed a held run's deactivations: it is then applied without the hold.
    deactivation_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            models.Index(fields=["seller", "-received_at"], name="feedrun_seller_recent"),
            # The sweep asks for runs left received/ingesting too long.
            models.Index(fields=["status", "received_at"], name="feedrun_status_idx"),
            # The retention prune reads only runs that still hold a file (retention.py).
            models.Index(
                fields=["received_at"], name="feedrun_file_kept", condition=~Q(file_path="")
            ),
        ]

    def __str__(self) -> str:
        return f"feed run {self.pk} ({self.get_status_display()})"


class Listing(models.Model):
    """A seller's product as the marketplace lists it, from the seller's catalog feed."""

    # No index of its own: listing_seller_sku_uniq starts with the seller (one index
    # fewer to write per listing; a first million-row feed inserts a million).
    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.CASCADE, related_name="listings", db_index=False
    )
    sku = models.CharField(max_length=128)
    # The seller's product id exactly as their database holds it (the feed's raw value,
    # untrimmed), "" when it is the SKU itself: what EDRTS and the status file name. A
    # trimmed id names another record (EDRTS would create a product the seller never had).
    record_id = models.TextField(blank=True, default="", db_default="")
    title = models.CharField(max_length=300, blank=True)
    description = models.TextField(blank=True)
    brand = models.CharField(max_length=200, blank=True)
    gtin = models.CharField(max_length=14, blank=True)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    sale_price = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    quantity = models.PositiveIntegerField(default=0)
    condition = models.CharField(max_length=20, blank=True)
    product_type = models.CharField(max_length=300, blank=True)
    image_link = models.URLField(max_length=1000, blank=True)
    link = models.URLField(max_length=1000, blank=True)
    active = models.BooleanField(default=True)
    # The feed run that last carried this SKU: a full feed deactivates the others.
    last_run_id = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # When what the marketplace says of it last changed (listed, deactivated, reactivated,
    # a rejection lifted): the status file's and EDRTS's mp_updated_at. Not ``updated_at``,
    # which content-only edits move while no status change is recorded.
    status_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["seller_id", "sku"]
        constraints = [
            models.UniqueConstraint(fields=["seller", "sku"], name="listing_seller_sku_uniq")
        ]
        indexes = [models.Index(fields=["seller", "active", "sku"], name="listing_seller_active")]

    def __str__(self) -> str:
        return f"{self.sku} {self.title}".strip()


class RejectedSku(models.Model):
    """A SKU the latest feed runs rejected, with the reason: what the listing-status file
    tells the seller. ``FeedRun.rejections`` keeps only the first few of a run; this keeps
    every one. The ingest upserts a row per rejected SKU and deletes it once the SKU is
    accepted again (or a full feed no longer carries it)."""

    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.CASCADE, related_name="rejected_skus"
    )
    sku = models.CharField(max_length=128)
    # As on ``Listing``: the id as the feed's row held it, "" when the SKU itself.
    record_id = models.TextField(blank=True, default="", db_default="")
    reason = models.CharField(max_length=300)
    run_id = models.PositiveBigIntegerField()
    # When the rejection (or its reason) last changed: the status time. A run that rejects
    # the SKU again for the same reason leaves it.
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name = "rejected SKU"
        verbose_name_plural = "rejected SKUs"
        ordering = ["seller_id", "sku"]
        constraints = [
            models.UniqueConstraint(fields=["seller", "sku"], name="rejectedsku_seller_sku_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.sku}: {self.reason}"


class StatusImport(models.Model):
    """The join import that brings the seller's listing-status file into their platform
    database, and the credentials of that file.

    As for the feed, the status file's password is stored only as a SHA-256 hash: the
    platform's import holds the password (it fetches the file), we only check it.
    ``status_key`` names the file's URL. ``cleanup_id`` is an import that a failed
    set-up or removal could not delete at the platform: the sweep keeps trying.
    """

    class State(models.TextChoices):
        NONE = "none", "Not set up"
        PROVISIONING = "provisioning", "Being set up"
        ACTIVE = "active", "Set up"
        FAILED = "failed", "Setting up failed"

    source = models.OneToOneField(
        CatalogSource, on_delete=models.CASCADE, related_name="status_import"
    )
    state = models.CharField(max_length=12, choices=State.choices, default=State.NONE)
    import_id = models.CharField(max_length=64, blank=True)
    cleanup_id = models.CharField(max_length=64, blank=True)
    status_key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    username = models.CharField(max_length=100, blank=True)
    password_hash = models.CharField(max_length=64, blank=True, editable=False)
    # The seller's field the file's SKU column joins on (the field feeding the feed's sku).
    join_key = models.CharField(max_length=100, blank=True)
    # {status column role: the seller's field it fills}; see status_file.COLUMNS.
    targets = models.JSONField(default=dict, blank=True)
    cron = models.CharField(max_length=64, blank=True)
    paused = models.BooleanField(default=False)
    # Why ``cron`` is not the schedule asked for ("" when it is): e.g. the platform refused
    # an hourly schedule and the import runs once a day (imports.hourly_fallback_hour).
    schedule_note = models.CharField(max_length=300, blank=True)
    provisioned_at = models.DateTimeField(null=True, blank=True)
    # The platform's view of the import, read periodically.
    platform_status = models.CharField(max_length=20, blank=True)
    last_download_time = models.CharField(max_length=32, blank=True)
    last_log = models.JSONField(default=dict, blank=True)
    status_checked_at = models.DateTimeField(null=True, blank=True)
    # The last failed action on the import, with the platform's message.
    last_error = models.CharField(max_length=500, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source_id"]
        indexes = [
            # The status sweep reads active imports; the cleanup sweep those left behind.
            models.Index(fields=["state"], name="statusimport_state_idx"),
            models.Index(fields=["cleanup_id"], name="statusimport_cleanup_idx"),
        ]

    def __str__(self) -> str:
        return f"status import of seller source {self.source_id}: {self.get_state_display()}"

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE and bool(self.import_id)

    @property
    def last_run_failed(self) -> bool:
        return str((self.last_log or {}).get("error_flag", "0")) in ("1", "true", "True")


class StatusChange(models.Model):
    """The listing-status outbox: one row per change of what the marketplace says about a
    SKU (listed, rejected and why, deactivated, reactivated, a new listing id and link).

    Written by database triggers on the listing and rejected-SKU tables (migration
    ``0009_status_outbox``) in the transaction of the change, whatever code made it. The
    row holds the status as it became (``status_values``), so the sender needs no other
    read; its id is the change's version: a higher id is a newer status of that SKU.
    ``sent_at`` is set once the row is settled: ``outcome`` says how.
    """

    class Outcome(models.TextChoices):
        SENT = "sent", "Sent"
        SUPERSEDED = "superseded", "Superseded by a newer change"
        SKIPPED = "skipped", "Not sent: no such product in the seller's database"
        OFF = "off", "Not sent: EDRTS off for the seller"

    id = models.BigAutoField(primary_key=True)
    # No database constraint (Django still cascades a seller's deletion, by the index):
    # only the triggers write rows, copying the seller of a listing or rejection whose
    # own foreign key was checked; a constraint would add one deferred check per row at
    # commit, a million for a first million-row feed (~7 s here; docs/benchmarks.md P6).
    seller = models.ForeignKey(
        "sellers.Seller",
        on_delete=models.CASCADE,
        related_name="status_changes",
        db_constraint=False,
    )
    sku = models.CharField(max_length=128)
    # The record id to send ("" when the SKU itself): see ``Listing.record_id``.
    record_id = models.TextField(blank=True, default="", db_default="")
    listing_id = models.BigIntegerField(null=True, blank=True)
    # live | inactive | rejected | "" (the SKU is neither listed nor rejected any more).
    status = models.CharField(max_length=10, blank=True)
    reason = models.CharField(max_length=300, blank=True)
    # The time the status file shows for it (its mp_updated_at).
    status_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    # db_default: the triggers insert rows without it.
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True, db_default="")

    class Meta:
        ordering = ["id"]
        indexes = [
            # The sender: a seller's unsent changes, oldest first.
            models.Index(
                fields=["seller", "id"],
                name="statuschange_unsent",
                condition=Q(sent_at__isnull=True),
            ),
            # The sweep and the page: the oldest unsent change (and which sellers have any).
            models.Index(
                fields=["created_at"],
                name="statuschange_unsent_age",
                condition=Q(sent_at__isnull=True),
            ),
            # The page's "sent in the last hour" and the prune of settled rows.
            models.Index(
                fields=["seller", "sent_at"],
                name="statuschange_sent",
                condition=Q(sent_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sku}: {self.status or 'unknown'} (change {self.pk})"


class StatusSent(models.Model):
    """The version (``StatusChange`` id) of the status last sent for each SKU: the sender
    never sends an older one."""

    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="+")
    sku = models.CharField(max_length=128)
    version = models.BigIntegerField()
    status = models.CharField(max_length=10, blank=True)
    sent_at = models.DateTimeField()

    class Meta:
        verbose_name = "sent status"
        verbose_name_plural = "sent statuses"
        ordering = ["seller_id", "sku"]
        constraints = [
            models.UniqueConstraint(fields=["seller", "sku"], name="statussent_seller_sku_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.sku}: version {self.version}"


class StatusSync(OutboxItem):
    """A seller's EDRTS sender: the switch staff turn, and the row of the EDRTS kind of
    ``marketplace.outbox`` (``OutboxItem``: the claim that lets one sender at a time drain
    the seller's changes, and the failures a person may need to see).

    Apart from ``CatalogSource`` on purpose: that row is saved whole by feed and import
    actions, which would undo a lease or a count written meanwhile."""

    seller = models.OneToOneField(
        "sellers.Seller", on_delete=models.CASCADE, related_name="status_sync"
    )
    edrts_enabled = models.BooleanField(default=True)
    # Waiting for the API user to sign in again (a 401, or nobody signed in): the sign-in
    # wakes it at once (sign_in.access_sign_in_finish) instead of its next try.
    waiting_for_access = models.BooleanField(default=False)
    # failures: failed sends in a row; at EDRTS_MAX_FAILURES the sweep stops until staff
    # retry. next_attempt_at: set only while backing off.
    last_error_at = models.DateTimeField(null=True, blank=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["seller_id"]

    def __str__(self) -> str:
        return f"status sync of seller {self.seller_id}"
