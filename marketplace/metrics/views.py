"""``GET /metrics``: the collector's numbers for Prometheus, to the holder of a token.

Never public: with no ``METRICS_TOKEN`` configured the endpoint answers 404 to everyone
(it is off); with one, a scrape must send ``Authorization: Bearer <token>`` (compared in
constant time), else 401. No address is trusted in place of the token: behind a proxy
every request comes from the proxy. No session, no CSRF (a GET, no cookie read).
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.db import connection, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

from marketplace.metrics.collector import DatabaseCollector

# A scrape that takes longer is cut off (Postgres): a slow scrape must never pile up
# beside the work it measures. Prometheus's own scrape timeout is 10 s by default.
SCRAPE_STATEMENT_TIMEOUT_MS = 5000


def _bearer(request: HttpRequest) -> str:
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else ""


def exposition() -> bytes:
    """The metrics in Prometheus's text format (0.0.4), read in one transaction."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    if connection.vendor != "postgresql":
        return generate_latest(registry)
    with transaction.atomic(), connection.cursor() as cursor:
        # Local to this transaction, and put back after it: an outer transaction (a test,
        # ATOMIC_REQUESTS) may go on after the scrape. A scrape that fails rolls it back.
        cursor.execute(
            "SELECT current_setting('statement_timeout'), "
            "set_config('statement_timeout', %s, true)",
            [str(SCRAPE_STATEMENT_TIMEOUT_MS)],
        )
        previous = cursor.fetchone()[0]
        exposed = generate_latest(registry)
        cursor.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
    return exposed


@require_GET
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    token: str = settings.METRICS_TOKEN
    if not token:
        raise Http404("metrics are off")
    if not hmac.compare_digest(_bearer(request).encode(), token.encode()):
        response = HttpResponse(
            "a bearer token is required\n", status=401, content_type="text/plain; charset=utf-8"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
