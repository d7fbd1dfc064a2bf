"""The Prometheus collector: turns the readings (``readings.py``) into metric families.

Every name starts with ``marketplace_`` and says its unit (``_seconds``); what is a
count of things now is a gauge. Counts of recent events (platform calls, failed feed
runs) are gauges over a window the exposition states (``marketplace_metrics_window_seconds``),
not counters: they come from the database, where rows are pruned, not from a process's
memory, so every web process answers the same and worker processes need no shared state.
Label values come from fixed lists (statuses, groups, reasons, buckets): no per-seller
or per-order series, whatever the population.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime

from django.utils import timezone
from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from marketplace.metrics import readings
from marketplace.performance import selectors as performance
from marketplace.reconcile import selectors as reconcile
from marketplace.reconcile.kinds import KIND_LABELS, MONEY_KINDS

# The names only the hooks report (readings.edrts_statuses_waiting and friends): the alert
# rules and the dashboard may name them before the hooks return anything.
HOOK_METRIC_NAMES = frozenset(
    {
        "marketplace_edrts_statuses_waiting",
        "marketplace_edrts_statuses_oldest_wait_seconds",
        "marketplace_refunds_waiting",
        "marketplace_refunds_oldest_wait_seconds",
    }
)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def _labelled(
    name: str, documentation: str, label: str, values: dict[str, float] | dict[str, int]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, value in values.items():
        family.add_metric([key], value)
    return family


class DatabaseCollector:
    """Reads the database when Prometheus scrapes (``collect``); nothing at registration."""

    def __init__(self, *, clock: Callable[[], datetime] = timezone.now) -> None:
        self.clock = clock

    def describe(self) -> list[Metric]:
        # Registering must not query the database (describe() would run collect()).
        return []

    def collect(self) -> Iterator[Metric]:
        started = time.monotonic()
        now = self.clock()
        yield from self._orders(now)
        yield from self._grants(now)
        yield from self._pulls(now)
        yield from self._platform(now)
        yield from self._catalog(now)
        yield from self._hooks(now)
        yield from self._performance(now)
        yield from self._reconcile(now)
        yield _labelled(
            "marketplace_metrics_window_seconds",
            "The window (seconds) of the metrics that count recent events: "
            'of="platform_calls" for marketplace_platform_calls_recent, '
            'of="feed_runs" for marketplace_feed_runs_failed_recent, '
            'of="reconcile" for marketplace_reconcile_findings_recent and '
            "marketplace_reconcile_passes_failed_recent.",
            "of",
            {
                "platform_calls": readings.PLATFORM_CALLS_WINDOW.total_seconds(),
                "feed_runs": readings.FEED_RUNS_WINDOW.total_seconds(),
                "reconcile": reconcile.RECENT_WINDOW.total_seconds(),
            },
        )
        yield _gauge(
            "marketplace_metrics_scrape_duration_seconds",
            "Seconds this scrape spent reading the database.",
            time.monotonic() - started,
        )

    def _orders(self, now: datetime) -> Iterator[Metric]:
        outbox = readings.push_outbox_read(now=now)
        yield _labelled(
            "marketplace_orders_waiting_to_push",
            "Orders whose current version has not reached the platform yet, by sync status "
            "(pending: due now; retrying: backing off after a failure; waiting_for_connection: "
            "the seller must reconnect).",
            "status",
            outbox.waiting,
        )
        yield _gauge(
            "marketplace_orders_push_due",
            "Orders due to be pushed now (pending, or retrying and due).",
            outbox.due,
        )
        yield _gauge(
            "marketplace_orders_push_oldest_wait_seconds",
            "Seconds since the oldest due push became due (0 when none is due).",
            outbox.oldest_due_wait_seconds,
        )
        dead = {"order_push": outbox.dead_letters} | readings.more_dead_letters(now=now)
        yield _labelled(
            "marketplace_dead_letters",
            "Work that gave up and waits for a person, by kind (order_push: orders whose "
            "push failed PUSH_MAX_FAILURES times; staff retry them from the dashboard).",
            "kind",
            dead,
        )

    def _grants(self, now: datetime) -> Iterator[Metric]:
        grants = readings.grants_read(now=now)
        yield _labelled(
            "marketplace_connections",
            "Sellers' platform connections by state (a seller who never started connecting "
            "has no connection row and is not counted).",
            "state",
            grants.by_state,
        )
        yield _gauge(
            "marketplace_grants_needing_reauthorization",
            "Sellers whose grant the platform refused (revoked, expired refresh token): "
            "nothing of theirs syncs until they connect again.",
            grants.by_state[readings.ConnState.NEEDS_REAUTH],
        )
        yield _labelled(
            "marketplace_refresh_tokens_expiring",
            "Connected grants whose refresh token expires within the given number of days "
            "(already expired included): the seller must re-authorize before then.",
            "within_days",
            {str(days): count for days, count in grants.refresh_expiring.items()},
        )

    def _pulls(self, now: datetime) -> Iterator[Metric]:
        pulls = readings.pulls_read(now=now)
        yield GaugeHistogramMetricFamily(
            "marketplace_pull_lag_seconds",
            "Connected sellers by how many seconds their scheduled pull is overdue (0 for "
            "a pull not yet due, e.g. an idle seller backed off; since they connected, if "
            "never scheduled): le is the upper bound, counts are cumulative, +Inf is every "
            "connected seller. A gauge histogram of the sellers now, not of events.",
            buckets=[
                # prometheus_client ships types but leaves floatToGoString unannotated.
                *((floatToGoString(bound), count) for bound, count in pulls.buckets),  # type: ignore[no-untyped-call]
                ("+Inf", pulls.connected),
            ],
            gsum_value=pulls.lag_sum_seconds,
        )
        yield _gauge(
            "marketplace_sellers_pulls_failing",
            "Connected sellers whose last PULL_FAILING_AFTER (or more) pulls in a row failed.",
            pulls.failing,
        )

    def _platform(self, now: datetime) -> Iterator[Metric]:
        calls = GaugeMetricFamily(
            "marketplace_platform_calls_recent",
            'Platform calls in the last marketplace_metrics_window_seconds{of="platform_calls"} '
            "seconds (the call log), by API group (orders, oauth, auth_api, platform_api, "
            'other) and status (the HTTP status code, or "none" when no answer came).',
            labels=["group", "status"],
        )
        for (group, status), count in sorted(readings.platform_calls_read(now=now).items()):
            calls.add_metric([group, status], count)
        yield calls
        embargoes = readings.embargoes_read(now=now)
        yield _labelled(
            "marketplace_embargo_remaining_seconds",
            "Seconds until the platform lets us call again, the longest hold of each group "
            "(orders: a seller's order calls; oauth: token calls; api_user: the Authentication "
            "and Platform API calls; api_login: sign-ins). 0 when nobody is held.",
            "group",
            {group: embargo.longest_remaining_seconds for group, embargo in embargoes.items()},
        )
        yield _labelled(
            "marketplace_embargoed_holders",
            "Holders (sellers, the API user, our OAuth client) the platform asked us to wait "
            "for, held now, by group.",
            "group",
            {group: embargo.holders for group, embargo in embargoes.items()},
        )
        yield _gauge(
            "marketplace_platform_api_needs_sign_in",
            "1 when the marketplace's API user must sign in again at the platform (catalog "
            "feed and listing-status work waits), else 0.",
            1 if readings.api_access_needs_sign_in() else 0,
        )

    def _catalog(self, now: datetime) -> Iterator[Metric]:
        runs = readings.feed_runs_read(now=now)
        yield _labelled(
            "marketplace_feed_runs_failed_recent",
            "Catalog feed runs received in the last "
            'marketplace_metrics_window_seconds{of="feed_runs"} seconds that failed, by '
            "reason (malformed: the file; worker_lost: it killed its worker repeatedly; "
            "file_gone; ingestion_error: our crash; other).",
            "reason",
            runs.failed,
        )
        yield _gauge(
            "marketplace_feed_runs_held",
            "Feed runs held until staff confirm their deactivations.",
            runs.held,
        )

    def _hooks(self, now: datetime) -> Iterator[Metric]:
        edrts = readings.edrts_statuses_waiting(now=now)
        if edrts is not None:
            yield _gauge(
                "marketplace_edrts_statuses_waiting",
                "Listing statuses waiting to be sent to the platform (EDRTS).",
                edrts.count,
            )
            yield _gauge(
                "marketplace_edrts_statuses_oldest_wait_seconds",
                "Seconds the oldest listing status has waited to be sent (0 when none).",
                edrts.oldest_wait_seconds,
            )
        refunds = readings.refunds_waiting(now=now)
        if refunds is not None:
            yield _gauge(
                "marketplace_refunds_waiting",
                "Refund decisions waiting to reach the platform.",
                refunds.count,
            )
            yield _gauge(
                "marketplace_refunds_oldest_wait_seconds",
                "Seconds the oldest refund decision has waited (0 when none).",
                refunds.oldest_wait_seconds,
            )

    def _performance(self, now: datetime) -> Iterator[Metric]:
        yield _labelled(
            "marketplace_sellers_over_performance_limit",
            "Sellers over a performance measure's limit (PERFORMANCE_THRESHOLDS, on the "
            "PERFORMANCE_FLAG_WINDOW_DAYS window), by measure: open threshold crossings.",
            "measure",
            performance.sellers_over_threshold_counts(),
        )
        refreshed = performance.last_refresh_at()
        yield _gauge(
            "marketplace_performance_scorecards_age_seconds",
            "Seconds since the seller scorecards were last computed (0 before the first run).",
            (now - refreshed).total_seconds() if refreshed else 0.0,
        )

    def _reconcile(self, now: datetime) -> Iterator[Metric]:
        # Every known kind has a series (0 when none), so rules and panels may name any.
        kinds = dict.fromkeys(KIND_LABELS, 0)
        open_by_kind = reconcile.open_counts_by_kind()
        yield _labelled(
            "marketplace_reconcile_findings_open",
            "Reconciliation findings left to staff and not settled yet, by kind.",
            "kind",
            {**kinds, **open_by_kind},
        )
        yield _labelled(
            "marketplace_reconcile_findings_recent",
            "Reconciliation findings recorded in the window (marketplace_metrics_window_seconds"
            '{of="reconcile"}), by kind, whatever was done about them.',
            "kind",
            {**kinds, **reconcile.findings_recent_by_kind(now=now)},
        )
        yield _gauge(
            "marketplace_reconcile_money_findings_open",
            "Open reconciliation findings about money (a refund or return our ledger and the "
            "platform disagree on): nothing is paid until staff settle them.",
            sum(n for kind, n in open_by_kind.items() if kind in MONEY_KINDS),
        )
        yield _gauge(
            "marketplace_reconcile_passes_failed_recent",
            "Reconciliation passes that ended with an error in the window (the platform "
            "refused or failed, a revoked grant); skipped passes are not counted.",
            reconcile.passes_failed_recent(now=now),
        )
