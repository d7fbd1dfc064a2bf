"""``python -m bench`` (``make bench``): P1 push, P2 refresh, P3 pull, P4 pages, P5 pull
against history, P6 catalog feed ingestion, P7 refunds against history, P8 listing-status
freshness through EDRTS, P9 pull capacity on a simulated clock, P10 seller scorecards.

Every size is a flag with an environment default (``BENCH_P1_ORDERS=500 make bench``);
``--smoke`` picks the small CI configuration, ``--only p1,p3`` a subset. Prints a table
and writes ``bench/results.json`` (or ``--output``). Exits 1 when a benchmark crashes,
and with ``--strict`` also when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_PATH, BenchEnvironment, log, machine_info, results_write, table

SMOKE = {
    "p1_orders": 100,
    "p1_profile": 0,
    "p1_rounds": 2,  # both sides go first once
    "p2_small": 1000,
    "p2_large": 5000,
    "p2_refreshes": 40,
    "p3_small": 50,
    "p3_large": 250,
    "p4_small_sellers": 10,
    "p4_small_orders": 200,
    "p4_large_sellers": 100,
    "p4_large_orders": 2000,
    "p5_small": 50,
    "p5_large": 1000,
    "p5_rounds": 1,
    "p6_small": 200,
    "p6_large": 2000,
    "p6_million": False,
    "p6_rounds": 1,
    "p8_changes": 1000,
    "p7_small": 50,
    "p7_large": 1000,
    "p7_rounds": 1,
    "p9_small": 200,
    "p9_large": 1000,
    "p9_minutes": 10,
    "p10_sellers": 50,
    "p10_orders": 2000,
    "p10_history_factor": 2,
    "p10_rounds": 1,
    "repeat": 3,
}


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(f"BENCH_{name.upper()}", default))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    add = parser.add_argument
    add("--only", default=os.environ.get("BENCH_ONLY", "p1,p2,p3,p4,p5,p6,p7,p8,p9,p10"))
    add("--smoke", action="store_true", help="tiny sizes for CI (correctness, not figures)")
    add("--strict", action="store_true", help="exit 1 when a goal is missed")
    add("--output", type=Path, default=Path(os.environ.get("BENCH_OUTPUT", RESULTS_PATH)))
    add("--concurrency", type=int, default=_env_int("concurrency", 4))
    add("--p1-orders", type=int, default=_env_int("p1_orders", 3000))
    add("--p1-sellers", type=int, default=_env_int("p1_sellers", 4))
    add("--p1-profile", type=int, default=_env_int("p1_profile", 0), help="cProfile N pushes")
    add(
        "--p1-rounds",
        type=int,
        default=_env_int("p1_rounds", 9),
        help="baseline/worker rounds, each side first in turn; the median ratio is reported",
    )
    add(
        "--p1-client-nice",
        type=int,
        default=_env_int("p1_client_nice", 0),
        help="niceness of both clients (0: the bench host's cores shared evenly)",
    )
    add("--p2-small", type=int, default=_env_int("p2_small", 1000))
    add("--p2-large", type=int, default=_env_int("p2_large", 100_000))
    add("--p2-due", type=int, default=_env_int("p2_due", 200))
    add("--p2-refreshes", type=int, default=_env_int("p2_refreshes", 200))
    add("--p3-small", type=int, default=_env_int("p3_small", 200))
    add("--p3-large", type=int, default=_env_int("p3_large", 2000))
    add("--p4-small-sellers", type=int, default=_env_int("p4_small_sellers", 100))
    add("--p4-small-orders", type=int, default=_env_int("p4_small_orders", 2000))
    add("--p4-large-sellers", type=int, default=_env_int("p4_large_sellers", 10_000))
    add("--p4-large-orders", type=int, default=_env_int("p4_large_orders", 200_000))
    add("--p5-small", type=int, default=_env_int("p5_small", 100))
    add("--p5-large", type=int, default=_env_int("p5_large", 10_000))
    add("--p5-rounds", type=int, default=_env_int("p5_rounds", 3))
    add("--p6-small", type=int, default=_env_int("p6_small", 10_000))
    add("--p6-large", type=int, default=_env_int("p6_large", 100_000))
    add(
        "--p6-million",
        action=argparse.BooleanOptionalAction,
        default=bool(_env_int("p6_million", 1)),
        help="P6 also ingests a feed of --p6-million-rows rows (on by default; off in --smoke)",
    )
    add("--p6-million-rows", type=int, default=_env_int("p6_million_rows", 1_000_000))
    add(
        "--p6-rounds",
        type=int,
        default=_env_int("p6_rounds", 3),
        help="P6 ingest vs COPY baseline (large feed): rounds, alternating; median ratio",
    )
    add("--p8-changes", type=int, default=_env_int("p8_changes", 10_000))
    add("--p8-sellers", type=int, default=_env_int("p8_sellers", 10))
    add("--p7-small", type=int, default=_env_int("p7_small", 100))
    add("--p7-large", type=int, default=_env_int("p7_large", 10_000))
    add("--p7-rounds", type=int, default=_env_int("p7_rounds", 3))
    add("--p9-small", type=int, default=_env_int("p9_small", 10_000))
    add("--p9-large", type=int, default=_env_int("p9_large", 100_000))
    add("--p9-minutes", type=int, default=_env_int("p9_minutes", 60), help="simulated")
    add("--p10-sellers", type=int, default=_env_int("p10_sellers", 10_000))
    add("--p10-orders", type=int, default=_env_int("p10_orders", 1_000_000), help="in the window")
    add(
        "--p10-history-factor",
        type=int,
        default=_env_int("p10_history_factor", 10),
        help="P10 then adds this many times --p10-orders of history before the window",
    )
    add("--p10-rounds", type=int, default=_env_int("p10_rounds", 3))
    add("--repeat", type=int, default=_env_int("repeat", 7))
    return parser


def _rows(results: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("benchmark", "measured", "goal", "met")]

    def met(flag: bool) -> str:
        return "yes" if flag else "NO"

    if p1 := results.get("p1"):
        rows.append(
            (
                f"P1 push, {p1['orders']} orders, c={p1['concurrency']}, {p1['broker']}",
                f"worker {p1['worker_orders_per_s']}/s vs bare {p1['baseline_orders_per_s']}/s"
                f" = {p1['ratio']} (median of {len(p1['rounds'])} rounds, quartiles"
                f" {p1['ratio_quartiles']}, load {p1['load_average_range']})",
                f">= {p1['goal_ratio']}",
                met(p1["goal_met"]),
            )
        )
    if p2 := results.get("p2"):
        rows.append(
            (
                f"P2 due selector, {p2['stored_large']} vs {p2['stored_small']} stored",
                f"{p2['select_large_ms']} ms vs {p2['select_small_ms']} ms = {p2['select_ratio']}x",
                "<= 2x",
                met(p2["select_ratio"] <= 2.0),
            )
        )
        rows.append(
            (
                f"P2 refresh, {p2['refreshes']} grants, c={p2['concurrency']}",
                f"vault {p2['vault_refreshes_per_s']}/s vs bare "
                f"{p2['baseline_refreshes_per_s']}/s = {p2['refresh_ratio']}",
                ">= 0.8",
                met(p2["refresh_ratio"] >= 0.8),
            )
        )
    if p3 := results.get("p3"):
        rows.append(
            (
                f"P3 pull peak memory, {p3['large']} vs {p3['small']} changed",
                f"{p3['peak_large_kib']} KiB vs {p3['peak_small_kib']} KiB = {p3['peak_ratio']}x",
                "<= 1.2x",
                met(p3["peak_ratio"] <= 1.2),
            )
        )
        rows.append(
            (
                "P3 idle pull: list requests per seller",
                str(p3["idle_list_requests_per_seller"]),
                "1",
                met(p3["idle_list_requests_per_seller"] == 1),
            )
        )
    if p4 := results.get("p4"):
        for key, page in p4["pages"].items():
            rows.append(
                (
                    f"P4 {key}, {p4['large']['sellers']}/{p4['large']['orders']} vs "
                    f"{p4['small']['sellers']}/{p4['small']['orders']}",
                    f"{page['queries_large']} vs {page['queries_small']} queries; "
                    f"{page['ms_large']} ms vs {page['ms_small']} ms = {page['ratio']}x",
                    "= queries, <= 2x",
                    met(page["queries_small"] == page["queries_large"] and page["ratio"] <= 2.0),
                )
            )
    if p5 := results.get("p5"):
        rows.append(
            (
                f"P5 pull of {p5['new_per_round']} new, {p5['large']} vs {p5['small']} in history",
                f"requests {sum(p5['requests_large'].values())} vs "
                f"{sum(p5['requests_small'].values())}; "
                f"{p5['ms_large']} ms vs {p5['ms_small']} ms = {p5['time_ratio']}x",
                "= requests, <= 1.2x",
                met(p5["goal_met"]),
            )
        )
    if p6 := results.get("p6"):
        rows.append(
            (
                f"P6 feed ingest, {p6['large']} vs {p6['small']} rows",
                f"{p6['ingest_large_s']} s vs {p6['ingest_small_s']} s = {p6['time_ratio']}x; "
                f"peak {p6['peak_large_kib']} vs {p6['peak_small_kib']} KiB = {p6['peak_ratio']}x",
                "<= 11x, <= 1.2x",
                met(p6["time_ratio"] <= 11.0 and p6["peak_ratio"] <= 1.2),
            )
        )
        if p6.get("ratio_to_copy") is not None:
            rows.append(
                (
                    f"P6 ingest rows/s vs COPY + one merge, {p6['large']} rows",
                    f"{p6['ingest_rows_per_s']}/s vs {p6['copy_baseline_rows_per_s']}/s = "
                    f"{p6['ratio_to_copy']} (unchanged re-send {p6['unchanged_rows_per_s']}/s)",
                    ">= 0.5",
                    met(p6["ratio_to_copy"] >= 0.5),
                )
            )
        if p6.get("rows_1m_seconds") is not None:
            rows.append(
                (
                    f"P6 feed ingest, {p6['million']} rows",
                    f"{p6['rows_1m_seconds']} s; peak {p6['peak_1m_kib']} KiB = "
                    f"{p6['peak_mem_ratio_1m']}x the {p6['large']}-row run's",
                    "<= 60 s, <= 1.2x",
                    met(p6["rows_1m_seconds"] <= 60.0 and p6["peak_mem_ratio_1m"] <= 1.2),
                )
            )
        rows.append(
            (
                f"P6 ingest rows/s vs parse+ORM bulk insert (old baseline), {p6['large']} rows",
                f"{p6['ingest_rows_per_s']}/s vs {p6['baseline_rows_per_s']}/s = "
                f"{p6['rate_ratio']}",
                "(info)",
                "-",
            )
        )
    if p8 := results.get("p8"):
        rows.append(
            (
                f"P8 status freshness, {p8['changes']} changes, {p8['sellers']} sellers",
                f"p50 {p8['p50_s']} s, p95 {p8['p95_s']} s, max {p8['max_s']} s; "
                f"{p8['requests']} requests of {p8['records_per_request']}; total "
                f"{p8['total_s']} s vs minimum {p8['minimum_s']} s = {p8['total_ratio']}x",
                "p95 <= 10 s, <= 1.5x",
                met(p8["goal_met"]),
            )
        )
    if p7 := results.get("p7"):
        rows.append(
            (
                f"P7 refunds pull, {p7['new_per_round']} new, {p7['large']} vs {p7['small']} "
                "completed",
                f"requests {p7['requests_large']} vs {p7['requests_small']}; "
                f"{p7['ms_large']} ms vs {p7['ms_small']} ms = {p7['time_ratio']}x",
                "= requests, <= 1.2x",
                met(p7["goal_met"]),
            )
        )
    if p9 := results.get("p9"):
        small, large = p9["small"], p9["large"]
        rows.append(
            (
                f"P9 listings/min, {large['sellers']} sellers, {p9['open_sellers']} open, "
                f"{p9['minutes']} simulated min",
                f"{p9['listing_requests_per_min']}/min (every seller each interval: "
                f"{p9['listing_requests_per_min_before']}/min)",
                f"<= {p9['listing_budget_per_min']}",
                met(p9["listing_requests_per_min"] <= p9["listing_budget_per_min"]),
            )
        )
        rows.append(
            (
                "P9 shipment to marketplace, open sellers",
                f"p50 {p9['freshness_p50_s']} s, p95 {p9['freshness_p95_s']} s",
                f"p95 <= {p9['interval_s']:.0f} s",
                met(p9["freshness_p95_s"] <= p9["interval_s"]),
            )
        )
        rows.append(
            (
                f"P9 fan-out per tick, {p9['fan_out_equal_due']} due, {large['sellers']} vs "
                f"{small['sellers']} connected",
                f"{large['fan_out_ms_equal_due']} ms vs {small['fan_out_ms_equal_due']} ms = "
                f"{p9['fan_out_ratio']}x; simulated ticks ({large['due_per_tick_median']} vs "
                f"{small['due_per_tick_median']} due): {large['fan_out_ms_median']} vs "
                f"{small['fan_out_ms_median']} ms = {p9['fan_out_tick_ratio']}x (quietest "
                f"quarter {p9['fan_out_tick_ratio_p25']}x, per seller due "
                f"{p9['fan_out_tick_ratio_per_due']}x)",
                "<= 1.2x, both",
                met(p9["fan_out_ratio"] <= 1.2 and p9["fan_out_tick_ratio"] <= 1.2),
            )
        )
    if p10 := results.get("p10"):
        rows.append(
            (
                f"P10 scorecards, {p10['sellers']} sellers, {p10['orders']} orders in window",
                f"job {p10['job_s']} s vs one bare SELECT {p10['bare_s']} s = "
                f"{p10['ratio_to_bare']}",
                "<= 1.5",
                met(p10["ratio_to_bare"] is not None and p10["ratio_to_bare"] <= 1.5),
            )
        )
        if p10["history_ratio"] is not None:
            rows.append(
                (
                    f"P10 scorecards with {p10['history']} orders of history",
                    f"job {p10['job_with_history_s']} s vs {p10['job_s']} s without = "
                    f"{p10['history_ratio']}x",
                    "<= 1.2x",
                    met(p10["history_ratio"] <= 1.2),
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    selected = [name.strip().lower() for name in args.only.split(",") if name.strip()]
    output: Path = args.output
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("{}\n")
    results: dict[str, Any] = {}
    failed: list[str] = []
    started = time.monotonic()
    env = BenchEnvironment(suffix="bench_smoke" if args.smoke else "bench").start()
    log(f"database {env.vendor}, broker {env.broker.split('@')[-1]}, sandbox {env.sandbox.port}")
    try:
        from bench import (
            capacity,
            feed_ingest,
            pages,
            pull,
            pull_history,
            push,
            refresh,
            refunds_history,
            scorecards,
            status_sync,
        )

        runs = {
            "p1": lambda: push.run(
                env,
                orders=args.p1_orders,
                concurrency=args.concurrency,
                sellers=args.p1_sellers,
                profile=args.p1_profile,
                rounds=args.p1_rounds,
                client_nice=args.p1_client_nice,
            ),
            "p2": lambda: refresh.run(
                env,
                small=args.p2_small,
                large=args.p2_large,
                due=min(args.p2_due, args.p2_small),
                refreshes=args.p2_refreshes,
                concurrency=args.concurrency,
                repeat=args.repeat * 2,
            ),
            "p3": lambda: pull.run(env, small=args.p3_small, large=args.p3_large),
            "p4": lambda: pages.run(
                env,
                small_sellers=args.p4_small_sellers,
                small_orders=args.p4_small_orders,
                large_sellers=args.p4_large_sellers,
                large_orders=args.p4_large_orders,
                repeat=args.repeat,
            ),
            "p5": lambda: pull_history.run(
                env, small=args.p5_small, large=args.p5_large, rounds=args.p5_rounds
            ),
            "p6": lambda: feed_ingest.run(
                env,
                small=args.p6_small,
                large=args.p6_large,
                million=args.p6_million_rows if args.p6_million else 0,
                rounds=args.p6_rounds,
            ),
            "p8": lambda: status_sync.run(env, changes=args.p8_changes, sellers=args.p8_sellers),
            "p7": lambda: refunds_history.run(
                env, small=args.p7_small, large=args.p7_large, rounds=args.p7_rounds
            ),
            "p9": lambda: capacity.run(
                env, small=args.p9_small, large=args.p9_large, minutes=args.p9_minutes
            ),
            "p10": lambda: scorecards.run(
                env,
                sellers=args.p10_sellers,
                orders=args.p10_orders,
                history_factor=args.p10_history_factor,
                rounds=args.p10_rounds,
            ),
        }
        for name in selected:
            if name not in runs:
                raise SystemExit(f"unknown benchmark {name!r}; choose from {', '.join(runs)}")
            log(f"--- {name.upper()}")
            section_started = time.monotonic()
            try:
                results[name] = runs[name]()
                results[name]["seconds"] = round(time.monotonic() - section_started, 1)
            except Exception as exc:
                traceback.print_exc()
                failed.append(name)
                results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            results_write(output, name, results[name])
    finally:
        env.stop()
    results_write(
        output,
        "run",
        {
            "seconds": round(time.monotonic() - started, 1),
            "selected": selected,
            "smoke": args.smoke,
            "failed": failed,
        },
    )
    profile = results.get("p1", {}).get("profile")
    if profile:
        print(profile)
    print()
    print(f"Machine: {machine_info()}")
    print(table(_rows({k: v for k, v in results.items() if "error" not in v})))
    for name in failed:
        print(f"{name.upper()} FAILED: {results[name]['error']}")
    missed = [k for k, v in results.items() if v.get("goal_met") is False]
    if missed:
        print(f"Goals missed: {', '.join(missed)}")
    print(f"Results: {output} ({time.monotonic() - started:.0f}s)")
    if failed or (args.strict and missed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
