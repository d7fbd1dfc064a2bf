"""Reads of reconciliation for staff pages and /metrics: findings (filtered, paged by the
caller), what is open, what the last day found by kind, a seller's last pass."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, QuerySet
from django.utils import timezone

from marketplace.reconcile.kinds import KIND_LABELS, MONEY_KINDS, kind_label
from marketplace.reconcile.models import Finding, FindingStatus, ReconcileRun


def findings_list(
    *, kind: str = "", seller_id: int | None = None, status: str = ""
) -> QuerySet[Finding]:
    """Findings newest first, filtered by kind, seller and status (``open`` …)."""
    query = Finding.objects.select_related("seller", "run")
    if kind:
        query = query.filter(kind=kind)
    if seller_id is not None:
        query = query.filter(seller_id=seller_id)
    if status:
        query = query.filter(status=status)
    return query.order_by("-created_at", "-id")


def kind_choices() -> list[tuple[str, str]]:
    return sorted(KIND_LABELS.items(), key=lambda item: item[1])


def findings_by_kind(
    *, since_hours: int = 24, open_by_kind: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """Findings of the last ``since_hours`` by kind (an index on kind and time), with how
    many of each are still open."""
    since = timezone.now() - timedelta(hours=since_hours)
    rows = (
        Finding.objects.filter(created_at__gte=since)
        .order_by()
        .values("kind")
        .annotate(total=Count("id"))
    )
    open_by_kind = open_counts_by_kind() if open_by_kind is None else open_by_kind
    return sorted(
        (
            {
                "kind": row["kind"],
                "label": kind_label(row["kind"]),
                "total": row["total"],
                "open": open_by_kind.get(row["kind"], 0),
                "money": row["kind"] in MONEY_KINDS,
            }
            for row in rows
        ),
        key=lambda row: (-row["total"], row["kind"]),
    )


def open_counts_by_kind() -> dict[str, int]:
    """Open findings (left to staff) by kind: a partial index holds only open rows."""
    return dict(
        Finding.objects.filter(status=FindingStatus.OPEN)
        .order_by()
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )


# /metrics counts recent findings over this window (the kind-and-time index): the cost of a
# scrape follows the day's findings, never the history.
RECENT_WINDOW = timedelta(hours=24)


def findings_recent_by_kind(*, now: datetime) -> dict[str, int]:
    return dict(
        Finding.objects.filter(created_at__gte=now - RECENT_WINDOW)
        .order_by()
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )


def passes_failed_recent(*, now: datetime) -> int:
    return (
        ReconcileRun.objects.filter(started_at__gte=now - RECENT_WINDOW)
        .exclude(error="")
        .exclude(error__startswith="skipped")
        .count()
    )


def seller_reconcile_summary(*, seller_id: int) -> dict[str, Any]:
    """The seller's last pass and their open findings, for the staff seller page."""
    return {
        "last_run": ReconcileRun.objects.filter(seller_id=seller_id)
        .order_by("-started_at", "-id")
        .first(),
        "open_findings": Finding.objects.filter(
            seller_id=seller_id, status=FindingStatus.OPEN
        ).count(),
    }
