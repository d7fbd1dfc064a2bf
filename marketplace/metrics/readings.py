"""What /metrics reports, read from the database on each scrape.

The database is the truth for pending work (DESIGN.md), so the numbers are the same
whichever web process answers the scrape, and however many worker processes did the
work: nothing is counted in a process's memory. Each reading is one aggregate query over
an index, and its cost follows what is pending, recent or connected, never the history
(synced orders, old calls and old feed runs are not read). A scrape makes a fixed number
of queries whatever the data size.

The readings at the end cover the other outboxes (EDRTS's status outbox, the returns
and refunds steps) and their dead letters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import (
    Case,
    CharField,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Max,
    Min,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce, Greatest

from marketplace.catalog.listing_status.edrts_sender import EDRTS_SEND
from marketplace.catalog.models import FeedRun, PlatformApiAccess, StatusChange
from marketplace.orders.models import OrderSync
from marketplace.outbox.metrics import dead_letters
from marketplace.platform.models import HolderEmbargo, PlatformCall
from marketplace.returns.models import PlatformStep, StepStatus
from marketplace.returns.services.steps import RETURN_STEP
from sellers.models import PlatformConnection

SyncStatus = OrderSync.Status
ConnState = PlatformConnection.State

# The call log is read over this recent window (its created_at index): enough calls for a
# rate, few enough rows to count on every scrape at full load.
PLATFORM_CALLS_WINDOW = timedelta(minutes=5)
# Feed runs fail rarely and are delivered hourly at most: a day of them.
FEED_RUNS_WINDOW = timedelta(hours=24)
# Upper bounds (seconds) of the pull-lag buckets; +Inf is added. With a 90 s interval a
# healthy seller sits in the 120 s bucket.
PULL_LAG_BUCKETS = (60, 120, 300, 600, 1800, 3600, 6 * 3600, 24 * 3600)
# Refresh tokens expiring within these many days (the alert reads 14).
REFRESH_EXPIRY_DAYS = (1, 7, 14)


def _seconds_since(moment: datetime | None, now: datetime) -> float:
    return max(0.0, (now - moment).total_seconds()) if moment else 0.0


# --- orders to push -------------------------------------------------------------------

# What waits: every status but synced (those are history) and failed (dead letters).
WAITING_STATUSES = (SyncStatus.PENDING, SyncStatus.RETRYING, SyncStatus.WAITING_FOR_CONNECTION)


@dataclass(frozen=True)
class PushOutbox:
    waiting: dict[str, int]  # by sync status
    due: int  # pending, or retrying and due: a worker should be pushing it now
    oldest_due_wait_seconds: float  # since the oldest due push became due (0: none)
    dead_letters: int  # failed: gave up after PUSH_MAX_FAILURES, waits for a person


def push_outbox_read(*, now: datetime) -> PushOutbox:
    """One aggregate over the not-synced rows (the (status, next_attempt_at) index)."""
    due = Q(status=SyncStatus.PENDING) | Q(status=SyncStatus.RETRYING, next_attempt_at__lte=now)
    row = OrderSync.objects.filter(status__in=[*WAITING_STATUSES, SyncStatus.FAILED]).aggregate(
        **{status: Count("id", filter=Q(status=status)) for status in WAITING_STATUSES},
        failed=Count("id", filter=Q(status=SyncStatus.FAILED)),
        due=Count("id", filter=due),
        oldest=Min("next_attempt_at", filter=due),
    )
    return PushOutbox(
        waiting={status: row[status] for status in WAITING_STATUSES},
        due=row["due"],
        oldest_due_wait_seconds=_seconds_since(row["oldest"], now),
        dead_letters=row["failed"],
    )


# --- grants -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Grants:
    by_state: dict[str, int]  # connection rows by state
    refresh_expiring: dict[int, int]  # days -> connected grants expiring within them


def grants_read(*, now: datetime) -> Grants:
    """One aggregate over the connections (state and refresh-expiry indexes)."""
    connected = Q(state=ConnState.CONNECTED)
    row = PlatformConnection.objects.aggregate(
        **{state: Count("id", filter=Q(state=state)) for state in ConnState.values},
        **{
            f"within_{days}": Count(
                "id",
                filter=connected & Q(refresh_token_expires_at__lt=now + timedelta(days=days)),
            )
            for days in REFRESH_EXPIRY_DAYS
        },
    )
    return Grants(
        by_state={state: row[state] for state in ConnState.values},
        refresh_expiring={days: row[f"within_{days}"] for days in REFRESH_EXPIRY_DAYS},
    )


# --- pulls ------------------------------------------------------------------------------


def pull_lag_reference() -> tuple[Q, Combinable]:
    """Which connections a pull lag is measured for, and from when: how overdue each
    connected seller's scheduled pull is (``SellerSync.next_pull_at``; since it
    connected when it has no schedule row). An idle seller backed off for hours is not
    late (its next pull is in the future: every bucket holds it, its lag counts 0); a
    seller whose due pull did not happen is, whatever its schedule. A queued pull's
    moment is its lease's end, so a lost message shows once the lease runs out."""
    return (
        Q(state=ConnState.CONNECTED),
        Coalesce("seller__sync__next_pull_at", "connected_at"),
    )


@dataclass(frozen=True)
class Pulls:
    # (upper bound in seconds, connected sellers whose lag is at most that): cumulative.
    buckets: list[tuple[float, int]]
    connected: int  # the +Inf bucket: every connected seller
    lag_sum_seconds: float  # of every connected seller with a reference moment
    failing: int  # connected sellers whose last PULL_FAILING_AFTER pulls or more failed


def pulls_read(*, now: datetime) -> Pulls:
    """One aggregate over the connected sellers (one row each, not their history): the lag
    buckets and the sellers whose pulls keep failing."""
    connections, since = pull_lag_reference()
    row = (
        PlatformConnection.objects.filter(connections)
        .annotate(lag_from=since)
        .aggregate(
            connected=Count("id"),
            lag_sum=Sum(
                Greatest(
                    ExpressionWrapper(Value(now) - F("lag_from"), output_field=DurationField()),
                    Value(timedelta(0), output_field=DurationField()),
                )
            ),
            failing=Count(
                "id",
                filter=Q(seller__sync__consecutive_failures__gte=settings.PULL_FAILING_AFTER),
            ),
            **{
                f"le_{bound}": Count("id", filter=Q(lag_from__gte=now - timedelta(seconds=bound)))
                for bound in PULL_LAG_BUCKETS
            },
        )
    )
    return Pulls(
        buckets=[(float(bound), row[f"le_{bound}"]) for bound in PULL_LAG_BUCKETS],
        connected=row["connected"],
        lag_sum_seconds=row["lag_sum"].total_seconds() if row["lag_sum"] else 0.0,
        failing=row["failing"],
    )


# --- platform calls ------------------------------------------------------------------------

# The API group of a call, from its logged path (relative to the group's base; the token
# endpoint's is its whole path). Order matters: the first match wins.
CALL_GROUPS: tuple[tuple[str, Q], ...] = (
    ("oauth", Q(path__endswith="/access_token")),
    (
        "orders",
        Q(path__startswith="/orders")
        | Q(path__startswith="/returns")
        | Q(path__startswith="/refunds"),
    ),
    (
        "auth_api",
        Q(path__startswith="/login")
        | Q(path__startswith="/user/")
        | Q(path__startswith="/accounts/"),
    ),
    ("platform_api", Q(path__startswith="/dbs/")),
    # EDRTS's paths are relative to its own base (``PLATFORM_EDRTS_BASE_URL``).
    ("edrts", Q(path__startswith="/db/")),
)
OTHER = "other"


def platform_calls_read(*, now: datetime) -> dict[tuple[str, str], int]:
    """Calls in the last ``PLATFORM_CALLS_WINDOW`` by (API group, status): the status code
    as text, or "none" when no answer came (timeout, connection error). One grouped
    query over the created_at index."""
    group = Case(
        *(When(condition, then=Value(name)) for name, condition in CALL_GROUPS),
        default=Value(OTHER),
        output_field=CharField(),
    )
    rows = (
        PlatformCall.objects.filter(created_at__gte=now - PLATFORM_CALLS_WINDOW)
        .order_by()
        .annotate(group=group)
        .values("group", "status")
        .annotate(n=Count("id"))
    )
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["group"], "none" if row["status"] is None else str(row["status"]))
        counts[key] = counts.get(key, 0) + row["n"]
    return counts


# --- embargoes -----------------------------------------------------------------------------

# Who the platform asked us to wait for, from the holder's prefix (embargo.py, oauth.py,
# auth_api.py, transport.py name them).
EMBARGO_GROUPS = (
    ("orders", "seller:"),  # one seller's order-interface calls
    ("oauth", "oauth-client:"),  # our token calls
    ("api_user", "api-user:"),  # the API user's Authentication and Platform API calls
    ("api_login", "api-login:"),  # the API user's sign-ins
)


@dataclass(frozen=True)
class Embargo:
    holders: int  # holders held now
    longest_remaining_seconds: float


def embargoes_read(*, now: datetime) -> dict[str, Embargo]:
    """The holds running now, by group (every group, 0 when none). The database copy of
    each hold is written before Redis's (embargo.py), so it is the complete list; one
    grouped query over the not_before index."""
    group = Case(
        *(When(holder__startswith=prefix, then=Value(name)) for name, prefix in EMBARGO_GROUPS),
        default=Value(OTHER),
        output_field=CharField(),
    )
    rows = (
        HolderEmbargo.objects.filter(not_before__gt=now)
        .order_by()
        .annotate(group=group)
        .values("group")
        .annotate(n=Count("id"), until=Max("not_before"))
    )
    found = {row["group"]: Embargo(row["n"], (row["until"] - now).total_seconds()) for row in rows}
    return {
        name: found.get(name, Embargo(0, 0.0)) for name in (*(g for g, _ in EMBARGO_GROUPS), OTHER)
    }


# --- catalog feeds ---------------------------------------------------------------------------

# Why a feed run failed, from what ingest.py and sweeps.py record: the file (malformed: the
# seller's export must change), a worker that died on it again and again (a poison file),
# a file gone from storage, or our own crash.
FEED_FAILURE_REASONS: tuple[tuple[str, Q], ...] = (
    ("malformed", Q(malformed=True)),
    ("worker_lost", Q(error__startswith="the worker stopped")),
    ("file_gone", Q(error="the file is gone")),
    ("ingestion_error", Q(error__startswith="ingestion error")),
)


@dataclass(frozen=True)
class FeedRuns:
    failed: dict[str, int]  # by reason, received within FEED_RUNS_WINDOW
    held: int  # waiting for staff to confirm their deactivations


def feed_runs_read(*, now: datetime) -> FeedRuns:
    """Failed runs of the last ``FEED_RUNS_WINDOW`` by reason, and held runs: one grouped
    query over the (status, received_at) index."""
    reason = Case(
        *(When(condition, then=Value(name)) for name, condition in FEED_FAILURE_REASONS),
        default=Value(OTHER),
        output_field=CharField(),
    )
    rows = (
        FeedRun.objects.filter(
            Q(status=FeedRun.Status.FAILED, received_at__gte=now - FEED_RUNS_WINDOW)
            | Q(status=FeedRun.Status.HELD)
        )
        .order_by()
        .annotate(reason=reason)
        .values("status", "reason")
        .annotate(n=Count("id"))
    )
    failed = {name: 0 for name, _ in FEED_FAILURE_REASONS} | {OTHER: 0}
    held = 0
    for row in rows:
        if row["status"] == FeedRun.Status.HELD:
            held += row["n"]
        else:
            failed[row["reason"]] += row["n"]
    return FeedRuns(failed=failed, held=held)


def api_access_needs_sign_in() -> bool:
    """The marketplace's API user at the platform must sign in again: the catalog's
    sweeps (feed status, clean-ups) wait until staff do."""
    state = PlatformApiAccess.objects.filter(pk=1).values_list("state", flat=True).first()
    return state == PlatformApiAccess.State.NEEDS_SIGN_IN


# --- the other outboxes: EDRTS statuses, return and refund steps ----------------------------


@dataclass(frozen=True)
class Waiting:
    count: int
    oldest_wait_seconds: float  # 0 when nothing waits


def edrts_statuses_waiting(*, now: datetime) -> Waiting | None:
    """Listing statuses waiting to be sent through EDRTS (the status outbox's unsent
    rows) and how long the oldest has waited: one aggregate over the partial index on
    unsent rows (``statuschange_unsent_age``), so its cost follows what waits, not the
    outbox's history. Reported as ``marketplace_edrts_statuses_waiting`` and
    ``marketplace_edrts_statuses_oldest_wait_seconds``."""
    row = StatusChange.objects.filter(sent_at__isnull=True).aggregate(
        count=Count("id"), oldest=Min("created_at")
    )
    return Waiting(row["count"] or 0, _seconds_since(row["oldest"], now))


def refunds_waiting(*, now: datetime) -> Waiting | None:
    """Return and refund calls waiting to reach the platform (the returns outbox's
    pending and retrying steps: push a return, mark complete, report errors) and how long
    the oldest has waited, through the partial index on waiting steps. Reported as
    ``marketplace_refunds_waiting`` and ``marketplace_refunds_oldest_wait_seconds``."""
    row = PlatformStep.objects.filter(
        status__in=[StepStatus.PENDING, StepStatus.RETRYING]
    ).aggregate(count=Count("id"), oldest=Min("created_at"))
    return Waiting(row["count"] or 0, _seconds_since(row["oldest"], now))


def more_dead_letters(*, now: datetime) -> dict[str, int]:
    """Dead letters of other kinds ({kind: count}, e.g.
    ``{"refund": 2}``), reported beside the order pushes' as
    ``marketplace_dead_letters{kind=...}``; one aggregate per outbox.

    ``refund``: return and refund calls (push, complete, report) that failed for good and
    wait for staff's retry on the returns page. ``edrts``: sellers whose EDRTS sender
    stopped after ``EDRTS_MAX_FAILURES`` failures in a row; their statuses wait until
    staff press "Retry now" (the import still reconciles them daily)."""
    return {"edrts": dead_letters(EDRTS_SEND), "refund": dead_letters(RETURN_STEP)}
