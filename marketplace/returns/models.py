"""Returns, sellers' refunds, the marketplace's decisions on them and the refund ledger.

* ``Return`` / ``ReturnLine``: a return the back office created through intake (what we
  push), with the platform's progress as last pulled (status, RMA, the seller's refund
  amounts) and our decision.
* ``SellerRefund`` / ``SellerRefundLine``: a refund a seller posted on its own, as
  pulled, with our decision.
* ``RefundLedgerEntry``: what the marketplace owes the buyer, one row per accepted refund
  or return and order line, written in the same transaction as the decision; unique, so a
  repeat can never write a second row. ``payment_key`` (``payment_keys.py``) is what the
  payments side pays against; ``paid_out_at`` is set by the payments side.
* ``PlatformStep``: the outbox of returns and refunds: every call the platform must get
  (push a return, mark complete, report errors) is a row with a state and a next-attempt
  time, written in the transaction that makes it necessary.
* ``ReturnsRecordProblem``: a listed refund or return that could not be stored or decided
  (any error): retried at the next pulls, then a dead letter staff see.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q
from django.db.models.expressions import Combinable

from marketplace.outbox.models import OutboxItem
from marketplace.returns.amounts import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS, in_unit
from marketplace.returns.payment_keys import PAYMENT_KEY_MAX_LENGTH

if TYPE_CHECKING:
    from marketplace.orders.models import Order

# Every after-sale amount (MONEY_*): 10 digits before the point and up to 3 after, so
# each currency's minor unit fits without rounding (``amounts.py``).


def _line_amount() -> models.DecimalField[Decimal | Combinable | None, Decimal | None]:
    """A seller refund line's amount: None when the platform's value could not be read
    (the refund's ``read_problems`` say why), never 0.00 in its place."""
    return models.DecimalField(
        max_digits=MONEY_MAX_DIGITS,
        decimal_places=MONEY_DECIMAL_PLACES,
        null=True,
        blank=True,
        default=Decimal("0"),
    )


class Decision(models.TextChoices):
    NONE = "", "Not decided"
    ACCEPTED = "accepted", "Accepted"
    REFUSED = "refused", "Refused"


class Decided(models.Model):
    """The marketplace's decision on the money a return's refund or a seller's refund
    takes (``services/decide.py``: one decision path for both), held once for both."""

    # "" until decided; a seller refund's is "" again when a corrected version comes back.
    decision = models.CharField(
        max_length=16, choices=Decision.choices, default=Decision.NONE, blank=True
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # What we reported when refused ([{code, message, problem}], a return's also naming
    # its ``mp_return_line_number``); a refund's are kept after a correction, for people.
    errors = models.JSONField(default=list, blank=True)
    # Accepted from the platform's record after a database restore (the platform already
    # showed it complete: ``reconcile/after_restore.py``), not by a pull's decision; no
    # platform call was made for it.
    recorded_after_restore = models.BooleanField(default=False)

    class Meta:
        abstract = True


class ReturnStatus(models.TextChoices):
    """The reference's four states, and ``REJECTED`` of the sandbox's reading B (the
    reference publishes no refusal). Any other state the platform sends is stored as it
    is, shown as it is and never acted on."""

    AWAITING_AUTHORIZATION = "AWAITING_AUTHORIZATION", "Awaiting the seller's authorization"
    AUTHORIZED = "AUTHORIZED", "Authorized by the seller"
    REFUNDED = "REFUNDED", "Refunded by the seller"
    COMPLETED = "COMPLETED", "Completed"
    REJECTED = "REJECTED", "Rejected by the seller"


class ReturnType(models.TextChoices):
    SHIP = "SHIP", "The buyer ships the item back"
    NO_RETURN = "NO_RETURN", "Refund without sending the item back"


class Return(Decided):
    Status = ReturnStatus

    # Deleting an order takes its returns (and their lines and steps) with it; an order
    # with money in the ledger cannot be deleted (the ledger PROTECTs it), so only one
    # that never paid anything back can go. Erasure pseudonymizes instead (privacy app).
    order = models.ForeignKey("orders.Order", on_delete=models.CASCADE, related_name="returns")
    seller = models.ForeignKey("sellers.Seller", on_delete=models.PROTECT, related_name="returns")
    mp_return_number = models.CharField(max_length=128)
    reason = models.TextField()
    carrier = models.CharField(max_length=64, blank=True)
    tracking_number = models.CharField(max_length=128, blank=True)
    request_date = models.DateField()
    respond_date = models.DateField()
    return_type = models.CharField(
        max_length=16, choices=ReturnType.choices, default=ReturnType.SHIP
    )
    # SHA-256 of the canonical intake body: same body again → idempotent, other → 409.
    intake_fingerprint = models.CharField(max_length=64, editable=False)

    # The platform's view, from the last pull (AWAITING_AUTHORIZATION until then).
    status = models.CharField(
        max_length=32, choices=ReturnStatus.choices, default=ReturnStatus.AWAITING_AUTHORIZATION
    )
    rma = models.CharField(max_length=128, blank=True)
    notes = models.TextField(blank=True)
    platform_digest = models.CharField(max_length=64, blank=True, editable=False)
    pulled_at = models.DateTimeField(null=True, blank=True)
    # When a pull first saw the return leave AWAITING_AUTHORIZATION for AUTHORIZED,
    # REFUNDED or COMPLETED (``services/return_progress.py``); never moved afterwards. The
    # platform publishes no time of authorization, so this is our first sight of it (a
    # pull's delay later). None while waiting, for a return refused without authorization,
    # and for returns authorized before the field existed (no history to rebuild it from).
    authorized_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "mp_return_number"], name="return_unique_number"
            )
        ]
        indexes = [
            # The pull's "open returns of this seller" (and the staff list of waiting ones).
            models.Index(fields=["seller", "status"], name="return_seller_status"),
            models.Index(fields=["status", "respond_date"], name="return_status_respond"),
            # The scorecards' returns of the window (performance/statements.py): requested
            # in the last 90 days, whatever their state, without reading older history.
            models.Index(fields=["request_date"], name="return_request_date"),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}/{self.mp_return_number}"

    @property
    def is_open(self) -> bool:
        return self.status not in (ReturnStatus.COMPLETED, ReturnStatus.REJECTED) and (
            self.decision != Decision.REFUSED
        )

    @property
    def status_known(self) -> bool:
        """False for a state the platform sent that we do not know (shown, never acted on)."""
        return self.status in ReturnStatus.values


class ReturnLine(models.Model):
    return_request = models.ForeignKey(Return, on_delete=models.CASCADE, related_name="lines")
    mp_return_line_number = models.CharField(max_length=128)
    order_line = models.ForeignKey(
        "orders.OrderLine", on_delete=models.CASCADE, related_name="return_lines"
    )
    quantity = models.PositiveIntegerField()
    preauthorized = models.BooleanField(default=False)
    requested_refund_principal = models.DecimalField(
        max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES
    )
    requested_refund_tax = models.DecimalField(
        max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES
    )
    # The seller's refund amounts (``.../refunds``), once REFUNDED; None until then, or
    # when the platform's value could not be read (the return's ``errors`` say why).
    principal_refund_amount = models.DecimalField(
        max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, null=True, blank=True
    )
    shipping_refund_amount = models.DecimalField(
        max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, null=True, blank=True
    )

    class Meta:
        ordering = ["return_request_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["return_request", "mp_return_line_number"], name="returnline_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.return_request_id}/{self.mp_return_line_number}"


class RefundStatus(models.TextChoices):
    """The reference's lifecycle: errors reported by the marketplace pause a refund; the
    seller's correction brings it back ``CREATED`` (a new version, decided again)."""

    CREATED = "CREATED", "Posted by the seller, to decide"
    PAUSED = "PAUSED", "Paused: waiting for the seller to correct it"
    COMPLETE = "COMPLETE", "Complete"


class SellerRefund(Decided):
    Status = RefundStatus

    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.PROTECT, related_name="seller_refunds"
    )
    order = models.ForeignKey(
        "orders.Order", on_delete=models.CASCADE, related_name="seller_refunds"
    )
    # The platform's ``feedamp_refund_id`` (a number; kept as text, as it appears in paths).
    refund_id = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=RefundStatus.choices)
    notes = models.TextField(blank=True)
    date_created = models.DateField(null=True, blank=True)
    platform_digest = models.CharField(max_length=64, blank=True, editable=False)
    pulled_at = models.DateTimeField(null=True, blank=True)
    # One row per feedamp id, holding its current version: ``version`` counts the versions
    # we stored (a correction after a pause is a new one); ``lines_digest`` names the
    # lines of the current version (an errors call is sent only for the lines it judged).
    version = models.PositiveIntegerField(default=1)
    lines_digest = models.CharField(max_length=64, blank=True, editable=False)

    # How many times our errors paused it at the platform, and when it was last paused.
    pause_count = models.PositiveIntegerField(default=0)
    paused_at = models.DateTimeField(null=True, blank=True)
    # Problems found reading the platform's lines as stored ([{code, message, label}]: an
    # amount that is not a number, missing, out of range or finer than the currency's
    # unit; ``amounts.line_amounts_read``). A refund with any is refused with them.
    read_problems = models.JSONField(default=list, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["seller", "refund_id"], name="sellerrefund_unique_id")
        ]
        indexes = [
            models.Index(fields=["seller", "decision"], name="sellerrefund_seller_decision"),
            models.Index(fields=["order"], name="sellerrefund_order"),
        ]

    def __str__(self) -> str:
        return f"refund {self.refund_id} of {self.order_id}"


class SellerRefundLine(models.Model):
    refund = models.ForeignKey(SellerRefund, on_delete=models.CASCADE, related_name="lines")
    mp_line_number = models.CharField(max_length=128)
    # None when the platform names a line the order does not have (UNKNOWN_LINE).
    order_line = models.ForeignKey(
        "orders.OrderLine",
        on_delete=models.CASCADE,
        related_name="seller_refund_lines",
        null=True,
        blank=True,
    )
    currency = models.CharField(max_length=3)
    refund_quantity = models.IntegerField(default=0)
    # None: the platform's value could not be read (the refund's ``read_problems`` say
    # why); never stored as 0.00 in its place.
    item_refund = _line_amount()
    item_tax_refund = _line_amount()
    shipping_refund = _line_amount()
    shipping_tax_refund = _line_amount()
    discount_refund = _line_amount()
    reason = models.CharField(max_length=128, blank=True)

    class Meta:
        ordering = ["refund_id", "id"]

    def __str__(self) -> str:
        return f"{self.refund_id}/{self.mp_line_number}"

    @property
    def readable(self) -> bool:
        return None not in (
            self.item_refund,
            self.item_tax_refund,
            self.shipping_refund,
            self.shipping_tax_refund,
            self.discount_refund,
        )

    @property
    def takes(self) -> Decimal:
        """What this line takes from the order line (the readings table). Only for a
        ``readable`` line: an unread amount is never counted as zero."""
        if not self.readable:
            raise ValueError(f"refund line {self}: an amount could not be read")
        return (
            Decimal(self.item_refund or 0)
            + Decimal(self.item_tax_refund or 0)
            + Decimal(self.shipping_refund or 0)
            + Decimal(self.shipping_tax_refund or 0)
            - Decimal(self.discount_refund or 0)
        )


class RefundLedgerEntry(models.Model):
    """Money the marketplace pays back to the buyer: one accepted refund or return, one
    order line, written with the decision, exactly the amount decided.

    Append-only (``append_only.py``: a database trigger on Postgres and SQLite): a row is
    never changed nor deleted, except ``paid_out_at``/``paid_out_by`` set once from
    empty. A correction is a new *reversing* entry: the negative of the entry it
    ``reverses``, with the staff user and the reason (``services/ledger.py``)."""

    order = models.ForeignKey("orders.Order", on_delete=models.PROTECT, related_name="ledger")
    # What the payments side pays against (``payment_keys.py``): from the platform's
    # refund or return and the line, so a row rebuilt after a restore has the same key.
    payment_key = models.CharField(max_length=PAYMENT_KEY_MAX_LENGTH, unique=True)
    order_line = models.ForeignKey(
        "orders.OrderLine", on_delete=models.PROTECT, related_name="ledger_entries"
    )
    refund = models.ForeignKey(
        SellerRefund, on_delete=models.PROTECT, null=True, blank=True, related_name="ledger"
    )
    return_request = models.ForeignKey(
        Return, on_delete=models.PROTECT, null=True, blank=True, related_name="ledger"
    )
    currency = models.CharField(max_length=3)
    amount = models.DecimalField(max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES)
    # The parts, for people: item (with its tax for a return), shipping, discount.
    detail = models.JSONField(default=dict, blank=True)
    # A reversing entry: the entry it cancels, why, and the staff user who did it.
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by"
    )
    reason = models.TextField(blank=True)
    created_by = models.CharField(max_length=150, blank=True)
    paid_out_at = models.DateTimeField(null=True, blank=True)
    paid_out_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "refund ledger entry"
        verbose_name_plural = "refund ledger entries"
        constraints = [
            models.UniqueConstraint(
                fields=["refund", "order_line"],
                condition=Q(refund__isnull=False, reverses__isnull=True),
                name="ledger_once_per_refund_line",
            ),
            models.UniqueConstraint(
                fields=["return_request", "order_line"],
                condition=Q(return_request__isnull=False, reverses__isnull=True),
                name="ledger_once_per_return_line",
            ),
            models.CheckConstraint(
                condition=(Q(refund__isnull=False) & Q(return_request__isnull=True))
                | (Q(refund__isnull=True) & Q(return_request__isnull=False)),
                name="ledger_one_source",
            ),
            # A decision's entry is never below zero; a reversing one never above, and
            # names who made it and why.
            models.CheckConstraint(
                condition=(Q(reverses__isnull=True) & Q(amount__gte=0))
                | (
                    Q(reverses__isnull=False) & Q(amount__lte=0) & ~Q(reason="") & ~Q(created_by="")
                ),
                name="ledger_sign_by_kind",
            ),
        ]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(paid_out_at__isnull=True),
                name="ledger_unpaid",
            ),
            models.Index(fields=["order_line"], name="ledger_line"),
        ]

    def __str__(self) -> str:
        return f"{self.amount_in_unit} {self.currency} for {self.order_line_id}"

    @property
    def amount_in_unit(self) -> Decimal:
        """The amount in its currency's unit (``20.00`` EUR, ``1500`` JPY): the column
        holds 3 places for every currency."""
        try:
            return in_unit(self.amount, self.currency)
        except ValueError:
            return self.amount


class MoneyActionKind(models.TextChoices):
    MARK_PAID_OUT = "mark_paid_out", "Marked ledger entries paid out"
    REVERSE = "reverse", "Reversed a ledger entry"
    RETRY_STEP = "retry_step", "Retried a refund or return step"


class MoneyAction(models.Model):
    """One staff (or payments-side) action on money, who and when: append-only like the
    ledger (``append_only.py``). ``subject`` names what was acted on, ``detail`` the
    numbers (entry ids, amounts, how many were changed)."""

    Kind = MoneyActionKind

    kind = models.CharField(max_length=20, choices=MoneyActionKind.choices)
    actor = models.CharField(max_length=150)
    subject = models.CharField(max_length=200, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kind", "-created_at"], name="moneyaction_kind_recent")]

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor} at {self.created_at:%Y-%m-%d %H:%M}"


class StepKind(models.TextChoices):
    PUSH_RETURN = "push_return", "Send the return"
    COMPLETE_RETURN = "complete_return", "Mark the return complete"
    REPORT_RETURN = "report_return", "Report the return's errors"
    COMPLETE_REFUND = "complete_refund", "Mark the refund complete"
    REPORT_REFUND = "report_refund", "Report the refund's errors"


class StepStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RETRYING = "retrying", "Retrying"
    DONE = "done", "Done"
    FAILED = "failed", "Failed (needs a person)"
    # An errors call dropped: the platform holds another version than the one it judged.
    SUPERSEDED = "superseded", "Dropped: the platform holds a newer version"


class PlatformStep(OutboxItem):
    """One call the platform must get for a return or a refund: the return step kind of
    ``marketplace.outbox`` (the engine's fields come from ``OutboxItem``)."""

    Kind = StepKind
    Status = StepStatus

    kind = models.CharField(max_length=20, choices=StepKind.choices)
    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="+")
    return_request = models.ForeignKey(
        Return, on_delete=models.CASCADE, null=True, blank=True, related_name="steps"
    )
    refund = models.ForeignKey(
        SellerRefund, on_delete=models.CASCADE, null=True, blank=True, related_name="steps"
    )
    body = models.JSONField(null=True, blank=True)
    # The refund's version this call belongs to, and (an errors call) the digest of the
    # lines its errors judged: re-read before sending, dropped when they differ.
    version = models.PositiveIntegerField(default=1)
    judged_digest = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=StepStatus.choices, default=StepStatus.PENDING)
    done_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "return_request"],
                condition=Q(return_request__isnull=False),
                name="step_once_per_return",
            ),
            models.UniqueConstraint(
                fields=["kind", "refund", "version"],
                condition=Q(refund__isnull=False),
                name="step_once_per_refund_version",
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status__in=["pending", "retrying"]),
                name="step_due",
            ),
            models.Index(fields=["status", "-updated_at"], name="step_status_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.return_request_id or self.refund_id}: {self.status}"

    @property
    def order(self) -> Order | None:
        """The order of the step's return or refund (pages name it; a template's
        ``default:`` filter cannot, as its argument fails on a missing refund)."""
        parent = self.return_request or self.refund
        return parent.order if parent is not None else None


class RecordKind(models.TextChoices):
    REFUND = "refund", "Seller refund"
    RETURN = "return", "Return"


class ReturnsRecordProblem(models.Model):
    """A listed refund or return we could not store or decide (an amount no column holds,
    a value no parser reads, anything): the rest of the page went on without it.

    Tried again at each pull (a refund is listed again while ``CREATED``; a return is read
    again by its own ``GET``) until ``RETURNS_RECORD_MAX_FAILURES``, then a dead letter
    (``dead_at``): left alone until the platform's record changes (another digest) or
    staff retry it. ``resolved_at`` is set when a later try went through."""

    Kind = RecordKind

    seller = models.ForeignKey("sellers.Seller", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=RecordKind.choices)
    # feedamp_refund_id, or the return's number
    record_key = models.CharField(max_length=128)
    mp_order_number = models.CharField(max_length=128, blank=True)
    entry_digest = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    failures = models.PositiveIntegerField(default=0)
    first_failed_at = models.DateTimeField()
    last_failed_at = models.DateTimeField()
    dead_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-last_failed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["seller", "kind", "record_key"], name="returns_problem_once"
            )
        ]
        indexes = [
            models.Index(
                fields=["seller", "kind"],
                condition=Q(resolved_at__isnull=True),
                name="returns_problem_open",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.record_key} of seller {self.seller_id}: {self.failures}"
