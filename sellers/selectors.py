"""Reads for the sellers app: connections, their timeline and what needs attention."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet

from marketplace.templatetags.display import format_time
from sellers.models import ConnectionEvent, PlatformConnection, Seller

# A queued refresh that has not happened after this long is queued again: the broker
# may have lost the message (the database is the truth, see DESIGN.md).
REFRESH_REQUEUE_AFTER = timedelta(minutes=5)

# settings.REFRESH_TOKEN_WARNING_DAYS → the marker column that says "sent".
WARNING_MARKERS = {
    30: "refresh_warning_30d_sent_at",
    7: "refresh_warning_7d_sent_at",
    1: "refresh_warning_1d_sent_at",
}


def warning_days() -> list[int]:
    """Configured warning thresholds that have a marker column, smallest first."""
    return sorted(d for d in settings.REFRESH_TOKEN_WARNING_DAYS if d in WARNING_MARKERS)


def seller_for_user(*, user: User | AnonymousUser) -> Seller | None:
    if isinstance(user, AnonymousUser) or not user.pk:
        return None
    return Seller.objects.filter(user=user).first()


def connection_get_for_seller(*, seller: Seller) -> PlatformConnection | None:
    return PlatformConnection.objects.filter(seller=seller).first()


def connection_events_for_seller(*, seller: Seller, limit: int = 20) -> list[ConnectionEvent]:
    return list(ConnectionEvent.objects.filter(seller=seller).select_related("actor")[:limit])


def connections_due_for_refresh(*, now: datetime) -> QuerySet[PlatformConnection]:
    """Connected grants whose access token expires within the refresh window and that
    are not already queued (or were queued so long ago the message may be lost).

    Ordered by expiry so the range scan on ``conn_access_expiry_idx`` serves it.
    """
    return (
        PlatformConnection.objects.filter(
            state=PlatformConnection.State.CONNECTED,
            access_token_expires_at__lte=now + settings.TOKEN_REFRESH_WINDOW,
        )
        .filter(
            Q(refresh_queued_at__isnull=True) | Q(refresh_queued_at__lt=now - REFRESH_REQUEUE_AFTER)
        )
        .order_by("access_token_expires_at")
    )


def connections_refresh_token_lapsed(*, now: datetime) -> QuerySet[PlatformConnection]:
    return PlatformConnection.objects.filter(
        state=PlatformConnection.State.CONNECTED, refresh_token_expires_at__lte=now
    ).order_by("refresh_token_expires_at")


def connections_due_for_expiry_warning(*, now: datetime) -> QuerySet[PlatformConnection]:
    """Connected grants that crossed a warning threshold whose warning is not sent yet."""
    due = Q()
    for days in warning_days():
        due |= Q(
            refresh_token_expires_at__lte=now + timedelta(days=days),
            **{f"{WARNING_MARKERS[days]}__isnull": True},
        )
    return (
        PlatformConnection.objects.filter(
            state=PlatformConnection.State.CONNECTED, refresh_token_expires_at__gt=now
        )
        .filter(due)
        .order_by("refresh_token_expires_at")
    )


@dataclass(frozen=True)
class ConnectionNotice:
    level: str  # "warn" or "bad": the badge class
    text: str


def connection_notices(
    *, connection: PlatformConnection | None, now: datetime
) -> list[ConnectionNotice]:
    """What the seller should know about their grant right now (portal and connection page)."""
    if connection is None:
        return []
    notices: list[ConnectionNotice] = []
    if connection.state == PlatformConnection.State.NEEDS_REAUTH:
        notices.append(
            ConnectionNotice(
                "bad",
                "The platform no longer accepts our authorization for your account. "
                "Reconnect to resume order sync.",
            )
        )
    if connection.is_live and connection.refresh_token_expires_at:
        left = connection.refresh_token_expires_at - now
        largest = max(warning_days(), default=0)
        if left <= timedelta(days=largest):
            notices.append(
                ConnectionNotice(
                    "warn",
                    "Your platform connection expires on "
                    f"{format_time(connection.refresh_token_expires_at)} "
                    f"(in {max(left.days, 0)} day(s)). Reconnect to renew it.",
                )
            )
    if connection.is_live and connection.last_error:
        notices.append(
            ConnectionNotice(
                "warn",
                "Renewing your platform connection did not succeed last time; we keep "
                "retrying. "
                f"Platform said: {connection.last_error}",
            )
        )
    return notices


def connection_card(*, seller: Seller, now: datetime) -> dict[str, object]:
    """The template context of the connection card (portal home, orders, connection page)."""
    connection = connection_get_for_seller(seller=seller)
    return {
        "seller": seller,
        "connection": connection,
        "state": connection.state if connection else PlatformConnection.State.NOT_CONNECTED,
        "State": PlatformConnection.State,
        "notices": connection_notices(connection=connection, now=now),
        "now": now,
    }
