"""P6 — catalog feed ingestion: a 100 000-row feed vs a 10 000-row feed, and rows/s against
a bare baseline measured in the same run.

Both feeds are gzip CSV files with the columns the marketplace asks the platform for
(realistic values, a ~200-character description). Each ingestion runs in a fresh
subprocess (``python -m bench.feed_ingest child MODE SELLER_ID FILE``) with
``tracemalloc`` started just before the work, into an empty catalog of its own seller:

* ``ingest``: the real service (``feed_stream_apply`` in one transaction: streamed parse,
  validation per row, batched upserts, the full feed's deactivation pass);
* ``baseline``: the same file through the same gzip + text wrapper + ``csv.reader``,
  bulk-inserted into the listings table in batches of the same size, no validation.

Goals: time(large) / time(small) <= 11, peak(large) / peak(small) <= 1.2 (streaming: the
peak must not grow with the file) and ingest rows/s >= 0.5 of the baseline's.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.harness import REPO_DIR, BenchEnvironment, log, sellers_create
from marketplace.catalog.mapping import LISTING_COLUMNS

# The columns the marketplace's default feed carries, in its order.
COLUMNS = LISTING_COLUMNS
BRANDS = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka")
TYPES = ("Home > Kitchen > Mugs", "Apparel > Shirts", "Electronics > Cables", "Garden > Tools")


def _gtin13(n: int) -> str:
    body = f"400{n:09d}"[:12]
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body))
    return body + str((10 - total % 10) % 10)


def feed_write(path: Path, rows: int) -> int:
    """A gzip CSV feed of ``rows`` products; returns its size in bytes."""
    with gzip.open(path, "wt", encoding="utf-8", newline="", compresslevel=6) as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(COLUMNS)
        for n in range(rows):
            writer.writerow(
                (
                    f"SKU-{n:07d}",
                    f"{BRANDS[n % 8]} product {n}, size {n % 5 + 1}",
                    f"A dependable {TYPES[n % 4].split(' > ')[-1].lower()} item number {n}. "
                    "Made to last, easy to clean, and shipped in recyclable packaging; "
                    'measures 10 x 12 cm and comes with a "no questions" return policy.',
                    BRANDS[n % 8],
                    _gtin13(n),
                    f"{5 + n % 200}.{n % 100:02d}",
                    f"{4 + n % 200}.00" if n % 7 == 0 else "",
                    str(n % 80),
                    "new" if n % 11 else "refurbished",
                    TYPES[n % 4],
                    f"https://images.example.com/p/{n}.jpg",
                    f"https://shop.example.com/products/{n}",
                )
            )
    return path.stat().st_size


def _in_child(env: BenchEnvironment, mode: str, seller_id: int, path: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.feed_ingest", "child", mode, str(seller_id), str(path)],
        cwd=REPO_DIR,
        env=env.child_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"feed ingest child failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(env: BenchEnvironment, *, small: int = 10_000, large: int = 100_000) -> dict[str, Any]:
    sizes = {"small": small, "large": large}
    files = {}
    for key, rows in sizes.items():
        path = env.tmpdir / f"feed-{rows}.csv.gz"
        size = feed_write(path, rows)
        files[key] = path
        log(f"P6: wrote a {rows}-row feed ({size // 1024} KiB gzip)")
    sellers = sellers_create(count=4, prefix="p6")
    measured: dict[str, dict[str, Any]] = {}
    for index, (mode, key) in enumerate(
        (("ingest", "small"), ("ingest", "large"), ("baseline", "small"), ("baseline", "large"))
    ):
        result = _in_child(env, mode, sellers[index].pk, files[key])
        measured[f"{mode}_{key}"] = result
        log(
            f"P6 {mode} {sizes[key]} rows: {result['seconds']} s, "
            f"peak {result['peak_bytes'] // 1024} KiB, {result.get('counts', '')}"
        )
    ingest_small, ingest_large = measured["ingest_small"], measured["ingest_large"]
    baseline_large = measured["baseline_large"]
    ingest_rate = large / ingest_large["seconds"]
    baseline_rate = large / baseline_large["seconds"]
    result: dict[str, Any] = {
        "small": small,
        "large": large,
        "ingest_small_s": ingest_small["seconds"],
        "ingest_large_s": ingest_large["seconds"],
        "time_ratio": round(ingest_large["seconds"] / ingest_small["seconds"], 2),
        "peak_small_kib": ingest_small["peak_bytes"] // 1024,
        "peak_large_kib": ingest_large["peak_bytes"] // 1024,
        "peak_ratio": round(ingest_large["peak_bytes"] / max(1, ingest_small["peak_bytes"]), 2),
        "ingest_rows_per_s": round(ingest_rate),
        "baseline_rows_per_s": round(baseline_rate),
        "rate_ratio": round(ingest_rate / baseline_rate, 2),
        "counts_large": ingest_large["counts"],
        "goal_time_ratio": 11.0,
        "goal_peak_ratio": 1.2,
        "goal_rate_ratio": 0.5,
    }
    result["goal_met"] = (
        result["time_ratio"] <= 11.0 and result["peak_ratio"] <= 1.2 and result["rate_ratio"] >= 0.5
    )
    return result


def _baseline(seller_id: int, path: Path) -> dict[str, Any]:
    """Parse and bulk-insert, nothing else: what any ingestion of this file must pay."""
    from django.db import transaction

    from marketplace.catalog.ingest import BATCH_SIZE
    from marketplace.catalog.models import Listing

    inserted = 0
    with path.open("rb") as raw, transaction.atomic():
        text = io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8", newline="")
        reader = csv.reader(text)
        header = next(reader)
        index = {name: i for i, name in enumerate(header)}
        batch: list[Listing] = []
        for row in reader:
            batch.append(
                Listing(
                    seller_id=seller_id,
                    **{
                        name: row[i]
                        for name, i in index.items()
                        if name not in ("price", "sale_price", "quantity")
                    },
                    price=row[index["price"]],
                    sale_price=row[index["sale_price"]] or None,
                    quantity=row[index["quantity"]],
                )
            )
            if len(batch) >= BATCH_SIZE:
                Listing.objects.bulk_create(batch)
                inserted += len(batch)
                batch = []
        if batch:
            Listing.objects.bulk_create(batch)
            inserted += len(batch)
    return {"inserted": inserted}


def _ingest(seller_id: int, path: Path) -> dict[str, Any]:
    from django.db import transaction

    from marketplace.catalog.ingest import feed_stream_apply

    with path.open("rb") as raw, transaction.atomic():
        counts = feed_stream_apply(
            raw,
            seller_id=seller_id,
            run_id=1,
            compression="gzip",
            delimiter="comma",
            full_feed=True,
        )
    return {"rows": counts.rows, "created": counts.created, "rejected": counts.rejected}


def _child(mode: str, seller_id: int, path: Path) -> None:
    import tracemalloc

    import django

    django.setup()
    from django.db import connection

    connection.ensure_connection()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    started = time.perf_counter()
    counts = _ingest(seller_id, path) if mode == "ingest" else _baseline(seller_id, path)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"peak_bytes": peak - base, "seconds": round(seconds, 3), "counts": counts}))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "child":
        _child(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
    else:
        sys.exit(
            "usage: python -m bench.feed_ingest child MODE SELLER_ID FILE (use python -m bench)"
        )
