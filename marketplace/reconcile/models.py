"""What a reconciliation pass did (``ReconcileRun``) and what it found (``Finding``).

A finding is recorded whatever was done about it: repaired by the app (the outbox sent
again, the next pull forced to read), recorded from the platform's record (after a
restore), or left to staff with both versions side by side (money, or both sides moved).
Rows are never deleted by the pass: staff settle the ones left to them. A daily job
(``retention.py``) deletes runs and done findings after ``RECONCILE_RETENTION_DAYS``.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class RunTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Daily schedule"
    STAFF = "staff", "Staff (Reconcile now)"
    COMMAND = "command", "manage.py reconcile"


class ReconcileRun(models.Model):
    """One pass over one seller."""

    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.CASCADE, related_name="reconcile_runs"
    )
    trigger = models.CharField(max_length=20, choices=RunTrigger.choices)
    actor = models.CharField(max_length=150, blank=True)
    # After a database restore: also look for work the platform holds that we lost.
    after_restore = models.BooleanField(default=False)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Platform calls the pass made (a seller with nothing open makes none).
    platform_calls = models.PositiveIntegerField(default=0)
    # How many objects of each sort were compared ({"orders": 12, "refunds": 3, ...}).
    compared = models.JSONField(default=dict, blank=True)
    findings_count = models.PositiveIntegerField(default=0)
    # A pass that could not finish (the platform refused, the token was revoked ...).
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(fields=["seller", "-started_at"], name="recon_run_seller_recent"),
            # /metrics' passes that ended with an error lately: only those rows.
            models.Index(
                fields=["-started_at"], condition=~Q(error=""), name="recon_run_failed_recent"
            ),
        ]

    def __str__(self) -> str:
        return f"reconcile {self.seller_id} at {self.started_at:%Y-%m-%d %H:%M}"


class FindingAction(models.TextChoices):
    RESENT = "resent", "Sent again through the outbox"
    PULL_FORCED = "pull_forced", "Next pull forced to read it"
    RECORDED = "recorded", "Recorded from the platform's record"
    STAFF = "staff", "Left to staff"


class FindingStatus(models.TextChoices):
    # Done by the app: nothing for a person to do.
    REPAIRED = "repaired", "Repaired"
    # Waits for staff (money, or both sides moved).
    OPEN = "open", "Open: for staff"
    SETTLED = "settled", "Settled by staff"


class Finding(models.Model):
    """One difference between us and the platform: both versions and what was done."""

    run = models.ForeignKey(ReconcileRun, on_delete=models.CASCADE, related_name="findings")
    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.CASCADE, related_name="reconcile_findings"
    )
    # What differs (``kinds.py`` names and explains each).
    kind = models.CharField(max_length=40)
    # The object, as people and the platform name it: "order", "return", "refund",
    # "listing", and its number ("MP-1001", "MP-1001/R1", "MP-1001/refund 7", a SKU).
    object_type = models.CharField(max_length=20)
    object_key = models.CharField(max_length=300)
    ours = models.JSONField(default=dict, blank=True)
    theirs = models.JSONField(default=dict, blank=True)
    action = models.CharField(max_length=20, choices=FindingAction.choices)
    status = models.CharField(max_length=20, choices=FindingStatus.choices)
    note = models.TextField(blank=True)
    # Staff's settlement of a finding left to them: their note, who and when.
    staff_note = models.TextField(blank=True)
    settled_by = models.CharField(max_length=150, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["seller", "-created_at"], name="recon_finding_seller_recent"),
            models.Index(fields=["kind", "-created_at"], name="recon_finding_kind_recent"),
            # /metrics and the overview: the last day's findings, whatever their kind.
            models.Index(fields=["-created_at"], name="recon_finding_recent"),
            models.Index(
                fields=["-created_at"],
                condition=Q(status="open"),
                name="recon_finding_open",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_type} {self.object_key}"
