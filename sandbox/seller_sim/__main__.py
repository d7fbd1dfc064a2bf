"""``python -m sandbox.seller_sim``: simulated sellers working through the v2 API.

One seller from the command line (``--seller``, ``--api-user``, ``--password``,
``--client``) or several from ``--sellers-file`` (a JSON list of objects with those keys,
``client_id`` for ``--client``, and any behaviour field to override). Behaviour options
apply to every seller; the sandbox's control API overrides them per seller while running.
Stops on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests

from sandbox.seller_sim.behaviour import Behaviour
from sandbox.seller_sim.client import OrderApi
from sandbox.seller_sim.seller import SimulatedSeller

log = logging.getLogger("seller_sim")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sandbox.seller_sim", description=__doc__)
    add = parser.add_argument
    add("--sandbox-url", default=os.environ.get("SANDBOX_URL", "http://127.0.0.1:8100"))
    add("--seller", help="the seller's platform username (logs and control-API overrides)")
    add("--api-user", help="the seller's order-API user (HTTP Basic)")
    add("--password", help="that user's password")
    add("--client", help="that user's numeric client id")
    add("--sellers-file", type=Path, help="JSON list of sellers (see the module docstring)")
    defaults = Behaviour()
    add("--ship-delay", type=float, default=defaults.ship_delay_seconds, help="seconds")
    add("--packages", type=int, default=defaults.packages, help="packages per order")
    add("--cancel-rate", type=float, default=defaults.cancel_rate, help="0-1")
    add("--bad-rate", type=float, default=defaults.bad_rate, help="0-1")
    add("--return-reject-rate", type=float, default=defaults.return_reject_rate, help="0-1")
    add(
        "--return-arrival",
        type=float,
        default=defaults.return_arrival_seconds,
        help="seconds from authorizing a return to refunding it",
    )
    add("--seller-refund-rate", type=float, default=defaults.seller_refund_rate, help="0-1")
    add("--over-refund-rate", type=float, default=defaults.over_refund_rate, help="0-1")
    add(
        "--seller-refund-delay",
        type=float,
        default=defaults.seller_refund_delay_seconds,
        help="seconds from shipping to a seller refund",
    )
    add(
        "--paused-refund-fix-rate",
        type=float,
        default=defaults.paused_refund_fix_rate,
        help="0-1: share of paused refunds it corrects (fits to what the buyer paid)",
    )
    add(
        "--paused-refund-fix-delay",
        type=float,
        default=defaults.paused_refund_fix_seconds,
        help="seconds from seeing a refund paused to correcting it",
    )
    add("--no-returns", action="store_true", help="leave returns alone")
    add("--seed", type=int, default=1, help="for repeatable runs")
    add("--poll-seconds", type=float, default=1.0)
    add("--no-control", action="store_true", help="ignore the control API's overrides")
    add("--log", type=Path, help="also append the log to this file")
    add(
        "--wait-seconds",
        type=float,
        default=120.0,
        help="wait this long for the sandbox's /health at start (quietly for 30 s)",
    )
    return parser


def _sellers(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.sellers_file:
        return json.loads(args.sellers_file.read_text())
    missing = [k for k in ("seller", "api_user", "password", "client") if not getattr(args, k)]
    if missing:
        options = ", ".join("--" + m.replace("_", "-") for m in missing)
        raise SystemExit(f"give --sellers-file, or all of: {options}")
    return [
        {
            "seller": args.seller,
            "api_user": args.api_user,
            "password": args.password,
            "client_id": args.client,
        }
    ]


def sandbox_wait(url: str, stop: threading.Event, *, seconds: float, quiet: float = 30.0) -> bool:
    """Wait for the sandbox's ``/health``: silently at first (``make run`` starts this
    process beside the sandbox, which needs a few seconds), one line if it is still not
    up after ``quiet`` seconds. False if it never answered within ``seconds`` (or on stop).
    """
    started = time.monotonic()
    said = False
    while not stop.is_set():
        try:
            if requests.get(f"{url.rstrip('/')}/health", timeout=2).status_code == 200:
                return True
        except requests.RequestException:
            pass
        waited = time.monotonic() - started
        if waited >= seconds:
            return False
        if waited >= quiet and not said:
            log.warning("the sandbox at %s is not up after %.0f s; still waiting", url, waited)
            said = True
        stop.wait(0.25)
    return False


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if args.log:
        handlers.append(logging.FileHandler(args.log))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", handlers=handlers)
    logging.getLogger("urllib3").setLevel(logging.WARNING)
    base = Behaviour(
        ship_delay_seconds=args.ship_delay,
        packages=args.packages,
        cancel_rate=args.cancel_rate,
        bad_rate=args.bad_rate,
        handle_returns=not args.no_returns,
        return_reject_rate=args.return_reject_rate,
        return_arrival_seconds=args.return_arrival,
        seller_refund_rate=args.seller_refund_rate,
        over_refund_rate=args.over_refund_rate,
        seller_refund_delay_seconds=args.seller_refund_delay,
        paused_refund_fix_rate=args.paused_refund_fix_rate,
        paused_refund_fix_seconds=args.paused_refund_fix_delay,
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if not sandbox_wait(args.sandbox_url, stop, seconds=args.wait_seconds):
        if stop.is_set():
            return 0
        log.error("the sandbox at %s did not answer in %.0f s", args.sandbox_url, args.wait_seconds)
        return 1
    threads = []
    for spec in _sellers(args):
        api = OrderApi(args.sandbox_url, spec["api_user"], spec["password"], str(spec["client_id"]))
        api.stop = stop
        seller = SimulatedSeller(
            spec["seller"],
            api,
            base.with_overrides(spec),
            seed=args.seed,
            poll_seconds=args.poll_seconds,
            use_control=not args.no_control,
        )
        thread = threading.Thread(target=seller.run, args=(stop,), name=spec["seller"], daemon=True)
        threads.append(thread)
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        for thread in threads:
            thread.join(timeout=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
