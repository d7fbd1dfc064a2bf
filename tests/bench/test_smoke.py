"""CI smoke runs of ``make bench`` and ``make soak``: the harness works end to end.

Both run as subprocesses (their own Django setup, database and sandbox; the test
database of this pytest run is not involved) with tiny sizes. Only correctness is
asserted: the results carry the expected keys; the soak lost and duplicated nothing, paid
no refund twice and ended with every product's status equal on both sides.
Timing ratios are not asserted here; they mean something only at full size on a quiet
machine (docs/benchmarks.md).

Redis: the bench smoke uses its own Redis database (``BENCH_REDIS_DB``, default 13 here)
and flushes only that one; the soak smoke restarts nothing (no worker kill, no broker
restart), so the shared Redis of the test suite is never disturbed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parents[2]
SMOKE_REDIS_DB = os.environ.get("BENCH_SMOKE_REDIS_DB", "13")

pytestmark = pytest.mark.slow


def _run(module: str, output: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["BENCH_REDIS_DB"] = SMOKE_REDIS_DB
    return subprocess.run(
        [sys.executable, "-m", module, "--smoke", "--output", str(output)],
        cwd=REPO_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_bench_smoke_runs_every_benchmark_and_writes_results(tmp_path: Path) -> None:
    output = tmp_path / "results.json"

    completed = _run("bench", output, timeout=240)

    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    results = json.loads(output.read_text())
    assert results["run"]["failed"] == []
    assert {"machine", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"} <= results.keys()
    assert "p10" in results
    # P10: a row per seller and window, every seller's late shipment rate computed
    assert results["p10"]["rows_written"] == 3 * results["p10"]["sellers"]
    assert results["p10"]["sellers_with_late_rate"] == results["p10"]["sellers"]
    # ... and the authorization wait of the returns it authorized (all on one seller here)
    assert results["p10"]["sellers_with_authorization_wait"] >= 1
    assert {"requests_small", "requests_large", "time_ratio"} <= results["p7"].keys()
    assert results["p7"]["requests_small"] == results["p7"]["requests_large"]
    assert {"baseline_orders_per_s", "worker_orders_per_s", "ratio"} <= results["p1"].keys()
    assert [r["worker_first"] for r in results["p1"]["rounds"]] == [False, True]
    assert {"select_ratio", "refresh_ratio", "refresh_token_reuse"} <= results["p2"].keys()
    assert results["p2"]["refresh_token_reuse"] == 0
    assert {"peak_ratio", "idle_list_requests_per_seller"} <= results["p3"].keys()
    assert results["p3"]["idle_list_requests_per_seller"] == 1
    assert {"time_ratio", "peak_ratio", "rate_ratio", "ratio_to_copy"} <= results["p6"].keys()
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        assert results["p6"]["copy_baseline_rows_per_s"] > 0  # COPY: Postgres only
    assert results["p6"]["counts_again"]["unchanged"] == results["p6"]["large"]
    assert results["p6"]["rows_1m_seconds"] is None  # the million-row feed is off in the smoke
    # Every generated row is valid: the large feed is ingested whole.
    assert results["p6"]["counts_large"]["rows"] == results["p6"]["large"]
    assert results["p6"]["counts_large"]["rejected"] == 0
    assert results["p5"]["requests_equal"] is True
    # One orders listing and no per-order request; the seller's pull goes on to the
    # after-sale listing (one ``GET /refunds?refund_status=CREATED``) since a shipped
    # order can be refunded (marketplace/sync/pull.py).
    assert results["p5"]["requests_large"] in (
        {"list_orders": 1},
        {"list_orders": 1, "list_refunds": 1},
    )
    assert {"overview", "sellers", "seller_detail"} <= results["p4"]["pages"].keys()
    for page in results["p4"]["pages"].values():
        assert page["queries_small"] == page["queries_large"]
    # P8: every status change reached the sandbox, no violation (figures only at full size)
    assert {"p50_s", "p95_s", "max_s", "requests", "records_per_request"} <= results["p8"].keys()
    assert results["p8"]["processed"] == results["p8"]["changes"]
    assert results["p8"]["violations"] == 0
    p9 = results["p9"]
    assert {"listing_requests_per_min", "freshness_p95_s", "fan_out_ratio"} <= p9.keys()
    # Only the due sellers are pulled: far fewer listings than one per seller per interval.
    assert p9["listing_requests_per_min"] < p9["listing_requests_per_min_before"] / 2
    assert p9["large"]["shipments_seen"] > 0
    assert "Results:" in completed.stdout


def test_soak_smoke_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    output = tmp_path / "soak.json"

    completed = _run("bench.soak", output, timeout=180)

    soak = json.loads(output.read_text())["soak"]
    assert "error" not in soak, soak.get("error")
    # The report says why a seller stopped: shown when the drain fails.
    keys = ("connections_needing_reauth", "reauth_reasons", "grants_revoked")
    summary = {k: soak.get(k) for k in keys}
    assert soak["drained"], f"{summary}\n{completed.stdout[-4000:]}"
    assert soak["lost"] == 0
    assert soak["duplicated_or_out_of_order"] == 0
    assert soak["refresh_token_reuse"] == 0
    assert soak["failures_left"] == 0
    assert soak["invalid_not_rejected"] == 0
    assert soak["faults_fired"] > 0
    assert soak["returns"] > 0
    assert soak["refunds"] > 0
    assert soak["refunds_paid_twice"] == 0
    assert soak["ledger_mismatch"] == 0
    assert soak["returns_unfinished"] == 0
    assert soak["refused_without_code"] == 0
    assert soak["ledger_over_line_paid"] == 0
    assert soak["refused_within_cost"] == 0
    # Last, a reconciliation pass over every order of the run finds nothing (issue 34).
    assert soak["reconcile_compared"]["orders"] > 0
    assert soak["reconcile_findings"] == 0, soak["reconcile_findings_examples"]
    assert soak["reconcile_errors"] == 0, soak["reconcile_errors_examples"]
    # The catalog side: feed runs ingested, every product's status equal on both sides.
    assert soak["catalog_products"] > 0
    assert soak["catalog_rows_rejected"] > 0
    assert soak["catalog_deactivated"] > 0
    catalog = ("catalog_mismatch_examples", "catalog_senders", "catalog_runs", "violations_by_kind")
    assert soak["catalog_status_mismatch"] == 0, (
        {k: soak.get(k) for k in catalog},
        soak.get("errors_in_this_process"),
        soak.get("events"),
    )
    assert completed.returncode == 0, completed.stdout[-4000:]
