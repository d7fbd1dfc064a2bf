"""The soak's catalog side (issue 24): feed runs during the soak, listing statuses sent back
through EDRTS by the soak's worker, and a product-by-product comparison at the end.

Set-up (before the worker starts): the marketplace's HTTP server (a threaded WSGI server in
this process: the platform's exports deliver the feeds to it), one Platform API user
reaching every catalog seller's account, signed in through the app's own services (two
steps, the code read from the sandbox's outbox), and for each of the first
``--catalog-sellers`` sellers a platform database of ``--catalog-products`` products (a
few with a price the feed's rules refuse), linked and provisioned exactly as staff do
(``database_link.seller_database_link``, ``join_import.catalog_feed_provision``: the export and the
daily listing-status import, which never runs during the soak).

Feed runs (the platform's export delivering to our server, the worker ingesting, the
sender draining the outbox the database's triggers wrote), at fixed points of the feed:

1. the catalog as created: accepted rows and rejected rows;
2. changes (a share of the products get a price the rules refuse, earlier rejections are
   fixed, a few products are new) while EDRTS allows one request every 2 s (429s, the
   reset header held by every worker) and answers 503 twice;
3. a full feed without a tenth of the products (their listings deactivated: nothing is
   sent for a product that left the database), once the statuses in flight are applied
   (``tick`` says why; ``catalog_deleted_in_flight`` when the wait ran out);
4. some of those products back (reactivated) and a few more rejections.

The soak's beat runs the EDRTS sweep (``status_sync_sweep``: wake-ups lost with the
broker or the killed worker) and the feed-run sweep. At the end, for every product of
every catalog seller: the sandbox's ``mp_listing_id`` / ``mp_status`` / ``mp_reason``
against what the listing-status file says (``status_file.status_rows``); a listed or
rejected SKU the platform lacks, and a product the file does not know, count too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

# EDRTS's budget in the soak: the default rate (300 a minute) in 10-second windows. The
# sandbox puts the window's end in X-Rate-Limit-Reset on every answer, its 503s included,
# and the app's transport holds every EDRTS call of the API user until a 503's reset: with
# 60-second windows one 503 costs up to a minute, too long for the smoke's budget.
EDRTS_LIMIT = (50, 10.0)
API_USER = ("soak-catalog", "soak-catalog-pass-1", "soak-catalog@marketplace.test")
MP_FIELDS = ("mp_listing_id", "mp_status", "mp_reason")
# The longest the deactivating run waits for the statuses in flight (see ``tick``).
DELETE_WAIT_SECONDS = 30.0
# (progress of the order feed, what the run does)
FEED_RUNS = ((0.1, "initial"), (0.35, "changes"), (0.6, "deactivate"), (0.85, "reactivate"))


def catalog_product(prefix: str, n: int, **changes: str) -> dict[str, str]:
    row = {
        "id": f"{prefix}-{n:05d}",
        "title": f"Soak Mug {n}",
        "description": "A sturdy mug, dishwasher safe.",
        "brand": "Northwind",
        "gtin": "4006381333931",
        "price": f"{10 + n % 90}.50",
        "sale_price": "",
        "quantity": str(1 + n % 40),
        "condition": "new",
        "image_link": f"https://img.example.com/{n}.jpg",
        "link": f"https://shop.example.com/p/{n}",
        "product_type": "Home > Mugs",
    }
    row.update(changes)
    return row


class WebServer:
    """The marketplace's web app served from this process (Django's threaded WSGI server,
    as ``runserver``/``live_server``): what the platform's exports deliver to."""

    def __init__(self) -> None:
        from django.core.handlers.wsgi import WSGIHandler
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet, allow_reuse_address=False)
        self.server.set_app(WSGIHandler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="soak-web", daemon=True
        )

    def start(self) -> WebServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class CatalogSide:
    def __init__(self, soak: Any, sellers: list[Any], products: int) -> None:
        self.soak = soak
        self.sandbox = soak.sandbox
        self.sellers = sellers
        self.products = products
        self.dbs: dict[int, str] = {}  # seller pk -> platform db id
        self.prefix: dict[int, str] = {}
        self.present: dict[int, dict[str, dict[str, str]]] = {}  # the platform's products
        self.removed: dict[int, list[str]] = {}
        self.done: set[str] = set()
        self.runs: list[dict[str, Any]] = []
        self.web: WebServer | None = None
        self.waiting_since = 0.0
        self.deleted_in_flight = False

    # --- set-up ---------------------------------------------------------------------

    def setup(self) -> None:
        """Before the worker starts: it reads the URLs set here from its environment."""
        import os

        from django.conf import settings

        from marketplace.catalog.api_access import sign_in
        from marketplace.catalog.feeds import database_link, provision
        from marketplace.catalog.feeds.mapping import mapping_default
        from marketplace.catalog.listing_status import join_import

        sandbox = self.sandbox
        self.web = WebServer().start()
        for name, value in (
            ("APP_BASE_URL", self.web.url),
            ("PLATFORM_API_BASE_URL", sandbox.platform_url),
            ("PLATFORM_EDRTS_BASE_URL", sandbox.edrts_url),
        ):
            os.environ[name] = value
            setattr(settings, name, value)
        account_ids = []
        for index, seller in enumerate(self.sellers):
            prefix = f"C{index}"
            rows = [catalog_product(prefix, n) for n in range(self.products)]
            for n in range(0, self.products, 17):  # ~6 %: refused by the feed's rules
                rows[n]["price"] = "-3.00"
            db = sandbox.db_create(
                f"Soak catalog {index}", account_name=f"Soak account {index}", rows=rows
            )
            self.dbs[seller.pk] = str(db["id"])
            self.prefix[seller.pk] = prefix
            self.present[seller.pk] = {row["id"]: row for row in rows}
            account_ids.append(str(db["account_id"]))
        sandbox.set_rate_limit("edrts", EDRTS_LIMIT[0], window_seconds=EDRTS_LIMIT[1])
        username, password, email = API_USER
        sandbox.api_user_create(username, password, email, account_ids=account_ids)
        sign_in.access_sign_in_start(username=username, password=password)
        sign_in.access_sign_in_finish(
            username=username, password=password, code=sandbox.twofa_code(email), actor=None
        )
        for seller in self.sellers:
            db_id = self.dbs[seller.pk]
            account_id = account_ids[self.sellers.index(seller)]
            source = database_link.seller_database_link(
                seller=seller, account_id=account_id, db_id=db_id, actor=None
            )
            source, error = join_import.catalog_feed_provision(
                source=source, feed=provision.FeedSettings(mapping=mapping_default())
            )
            if error:
                raise RuntimeError(f"listing-status import not provisioned: {error}")
            # Its first run now (it creates the mp_* fields; EDRTS waits for it), read as
            # the periodic status sweep would: the sender may then send.
            status_import = join_import.status_import_of(source)
            self.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})
            join_import.status_import_status_refresh(source=source)
        self.soak.note("catalog set up", sellers=len(self.sellers), products=self.products)

    def stop(self) -> None:
        if self.web is not None:
            self.web.stop()
            self.web = None

    # --- the feed runs ------------------------------------------------------------------

    def tick(self, progress: float) -> None:
        """At most one feed run a tick. Products are deleted only once every status sent
        before has been applied (or after DELETE_WAIT_SECONDS): EDRTS creates a product
        for an id the database lacks, so a status still in flight for a product the
        seller deletes meanwhile would come back as a stray product; no marketplace can
        know of a deletion before the next feed (counted by the sandbox as
        ``edrts_marketplace_created_product``, reported, not judged here)."""
        for at, kind in FEED_RUNS:
            if progress < at or kind in self.done:
                continue
            if kind == "deactivate":
                now = time.monotonic()
                self.waiting_since = self.waiting_since or now
                idle = self.soak.guarded("catalog_idle", self.settled_so_far)
                if not idle and now - self.waiting_since < DELETE_WAIT_SECONDS:
                    return
                self.deleted_in_flight = not idle
            self.done.add(kind)
            self.soak.guarded(f"catalog_{kind}", lambda k=kind: self.feed_run(k))
            return

    def _change(self, seller_pk: int, kind: str) -> None:
        rows = self.present[seller_pk]
        prefix = self.prefix[seller_pk]
        ids = sorted(rows)
        changed: list[dict[str, str]] = []
        added: list[dict[str, str]] = []
        deleted: list[str] = []
        if kind == "changes":
            for n, sku in enumerate(ids):
                if rows[sku]["price"] == "-3.00":
                    changed.append({"id": sku, "price": "4.00"})  # fixed: listed now
                elif n % 9 == 4:
                    changed.append({"id": sku, "price": "abc"})  # refused from now on
                elif n % 9 == 5:
                    changed.append({"id": sku, "title": f"Soak Mug {n} (new title)"})
            start = self.products
            added = [catalog_product(prefix, n) for n in range(start, start + 5)]
        elif kind == "deactivate":
            deleted = [sku for n, sku in enumerate(ids) if n % 10 == 3]
            self.removed[seller_pk] = deleted
        elif kind == "reactivate":
            at_platform = self.platform_rows(self.dbs[seller_pk])
            for row in self._back(seller_pk):
                (changed if row["id"] in at_platform else added).append(row)
            changed = [{"id": sku, "price": "-1.00"} for n, sku in enumerate(ids) if n % 23 == 8]
        for row in changed:
            rows.setdefault(row["id"], {}).update(row)
        for row in added:
            rows[row["id"]] = row
        for sku in deleted:
            rows.pop(sku, None)
        if changed or added or deleted:
            self.sandbox.db_rows_change(
                self.dbs[seller_pk], rows=changed or None, add=added or None, delete=deleted or None
            )

    def _back(self, seller_pk: int) -> list[dict[str, str]]:
        prefix = self.prefix[seller_pk]
        back = self.removed.get(seller_pk, [])[::2]
        return [catalog_product(prefix, int(sku.rsplit("-", 1)[1])) for sku in back]

    def feed_run(self, kind: str) -> None:
        from marketplace.catalog.models import CatalogSource

        sandbox = self.sandbox
        if kind == "changes":
            sandbox.set_rate_limit("edrts", 1, window_seconds=2)
            sandbox.edrts_state(unavailable_next=2)
        statuses = []
        for seller in self.sellers:
            self._change(seller.pk, kind)
            source = CatalogSource.objects.get(seller=seller)
            run = sandbox.export_run(source.export_id)
            statuses.append(run.get("status"))
        self.runs.append({"kind": kind, "export_runs": statuses})
        self.soak.note(f"catalog feed run: {kind}", export_runs=statuses)
        if kind == "changes":
            # Long enough for a few 429s; the default limit afterwards.
            threading.Timer(
                6.0,
                lambda: sandbox.set_rate_limit(
                    "edrts", EDRTS_LIMIT[0], window_seconds=EDRTS_LIMIT[1]
                ),
            ).start()

    # --- beat and drain ---------------------------------------------------------------

    def beat(self, now: float) -> None:
        from marketplace.catalog.listing_status.edrts_sender import status_sync_sweep
        from marketplace.catalog.sweeps import feed_run_sweep

        soak = self.soak
        if now >= soak.next_edrts_sweep:
            soak.guarded("status_sync_sweep", status_sync_sweep)
            soak.next_edrts_sweep = now + 3
        if now >= soak.next_feed_sweep:
            soak.guarded("feed_run_sweep", feed_run_sweep)
            soak.next_feed_sweep = now + 10

    def settled(self) -> bool:
        return len(self.done) == len(FEED_RUNS) and self.settled_so_far()

    def settled_so_far(self) -> bool:
        """Every feed run ingested, every status change settled, no EDRTS batch queued."""
        from marketplace.catalog.models import FeedRun, StatusChange

        finished = (FeedRun.Status.SUCCEEDED, FeedRun.Status.FAILED, FeedRun.Status.HELD)
        if FeedRun.objects.exclude(status__in=finished).exists():
            return False
        if StatusChange.objects.filter(sent_at__isnull=True).exists():
            return False
        return bool(self.sandbox.edrts_state()["stats"]["jobs"]["queued"] == 0)

    # --- the comparison -------------------------------------------------------------------

    def platform_rows(self, db_id: str) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        page = 1
        while True:
            rows = self.sandbox.db_rows(db_id, page=page, per_page=1000)
            for row in rows:
                found[str(row["id"])] = row
            if len(rows) < 1000:
                return found
            page += 1

    def compare(self) -> dict[str, Any]:
        from django.db.models import Count, Sum

        from marketplace.catalog.listing_status.status_file import INACTIVE, status_rows
        from marketplace.catalog.models import FeedRun, StatusChange, StatusSync

        products = 0
        wrong: list[str] = []
        by_status: dict[str, int] = {}
        for seller in self.sellers:
            at_platform = self.platform_rows(self.dbs[seller.pk])
            expected = {
                sku: (listing_id, status, reason)
                for sku, listing_id, status, reason, _, _ in status_rows(seller_id=seller.pk)
            }
            for sku, row in at_platform.items():
                products += 1
                want = expected.get(sku)
                got = tuple(str(row.get(f) or "") for f in MP_FIELDS)
                if want is None or got != want:
                    wrong.append(f"{sku}: platform {got} != marketplace {want}")
                if want is not None:
                    by_status[want[1]] = by_status.get(want[1], 0) + 1
            for sku, want in expected.items():
                if sku not in at_platform:
                    if want[1] == INACTIVE:
                        by_status[INACTIVE] = by_status.get(INACTIVE, 0) + 1
                    else:
                        wrong.append(f"{sku}: missing at the platform, marketplace {want}")
        runs = FeedRun.objects.filter(seller__in=self.sellers)
        totals = runs.aggregate(
            rows=Sum("rows"), rejected=Sum("rejected"), deactivated=Sum("deactivated")
        )
        edrts = self.sandbox.edrts_state()["stats"]
        return {
            "catalog_sellers": len(self.sellers),
            "catalog_products": products,
            "catalog_status_mismatch": len(wrong),
            "catalog_mismatch_examples": wrong[:10],
            "catalog_statuses": by_status,
            "catalog_feed_runs": dict(
                runs.order_by().values_list("status").annotate(n=Count("id"))
            ),
            "catalog_feed_rows": totals["rows"] or 0,
            "catalog_rows_rejected": totals["rejected"] or 0,
            "catalog_deactivated": totals["deactivated"] or 0,
            "catalog_changes_unsent": StatusChange.objects.filter(sent_at__isnull=True).count(),
            "catalog_changes_by_outcome": dict(
                StatusChange.objects.order_by().values_list("outcome").annotate(n=Count("id"))
            ),
            "edrts_requests": edrts["requests"]["requests"],
            "edrts_rate_limited": edrts["requests"]["rate_limited"],
            "edrts_unavailable": edrts["requests"]["unavailable"],
            "edrts_records_processed": edrts["records_processed"],
            "catalog_runs": self.runs,
            "catalog_deleted_in_flight": self.deleted_in_flight,
            # Each seller's sender as staff see it (a last error, a backoff, a stop).
            "catalog_senders": [
                {
                    "seller": seller_id,
                    "failures": failures,
                    "last_error": last_error,
                    "next_attempt_at": str(next_at) if next_at else None,
                }
                for seller_id, failures, last_error, next_at in StatusSync.objects.filter(
                    seller__in=self.sellers
                ).values_list("seller_id", "failures", "last_error", "next_attempt_at")
            ],
        }
