"""Run the simulated seller (``python -m sandbox.seller_sim``) as a subprocess for tests.

It speaks HTTP to a running ``SandboxProcess``; its log (what it confirmed, shipped,
cancelled or skipped) is in ``log_text()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.sandbox_process import REPO_DIR, SandboxProcess


class SellerSimProcess:
    def __init__(
        self,
        sandbox: SandboxProcess,
        *,
        seller: str = "",
        api_user: str = "",
        password: str = "",
        client_id: str = "",
        sellers: list[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        """One seller (``seller``, ``api_user``, ``password``, ``client_id``) or several
        (``sellers``: dicts with those keys, written to a ``--sellers-file``); ``options``
        are command-line options (``ship_delay=1`` → ``--ship-delay 1``)."""
        self.sandbox = sandbox
        workdir = Path(tempfile.mkdtemp(prefix="seller-sim-"))
        self.log_path = workdir / "seller_sim.log"
        self.command = [
            sys.executable, "-m", "sandbox.seller_sim", "--sandbox-url", sandbox.base_url,
        ]  # fmt: skip
        if sellers is not None:
            sellers_file = workdir / "sellers.json"
            sellers_file.write_text(json.dumps(sellers))
            self.command += ["--sellers-file", str(sellers_file)]
        else:
            self.command += [
                "--seller", seller, "--api-user", api_user,
                "--password", password, "--client", client_id,
            ]  # fmt: skip
        options.setdefault("poll_seconds", 0.2)
        for key, value in options.items():
            flag = f"--{key.replace('_', '-')}"
            self.command += [flag] if value is True else [flag, str(value)]
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> SellerSimProcess:
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        env["PYTHONUNBUFFERED"] = "1"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            self.command, cwd=REPO_DIR, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )
        return self

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        self._process = None
        self._log.close()

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log_text()
            if text in log:
                return log
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not in the simulator's log:\n{self.log_text()[-3000:]}")

    def __enter__(self) -> SellerSimProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
