"""Run the platform sandbox as a subprocess for tests: ``SandboxProcess``.

It starts ``python -m sandbox serve`` on a free port with its own temporary SQLite
database, waits for ``/health`` and wraps the control API (``/sandbox/api``) in small
helpers. The app's code never imports the sandbox; tests talk to it over HTTP only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

REPO_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SandboxError(RuntimeError):
    pass


class SandboxProcess:
    """The sandbox in a subprocess; ``start()`` / ``stop()`` or use as a context manager."""

    def __init__(self, *, port: int | None = None, auto_ship_seconds: float | None = None) -> None:
        self.port = port or free_port()
        self.auto_ship_seconds = auto_ship_seconds
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.api_url = self.base_url + "/api/v1"
        self.control_url = self.base_url + "/sandbox/api"
        self._tmpdir = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
        self.db_path = self._tmpdir / "sandbox.sqlite3"
        self.log_path = self._tmpdir / "sandbox.log"
        self._process: subprocess.Popen | None = None
        self._log_file: Any = None
        self.http = requests.Session()

    @property
    def pid(self) -> int:
        assert self._process is not None, "sandbox not started"
        return self._process.pid

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> SandboxProcess:
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        env["SANDBOX_DATABASE_URL"] = str(self.db_path)
        env["PYTHONUNBUFFERED"] = "1"
        command = [sys.executable, "-m", "sandbox", "serve", "--port", str(self.port)]
        if self.auto_ship_seconds is not None:
            command += ["--auto-ship-seconds", str(self.auto_ship_seconds)]
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            command, cwd=REPO_DIR, env=env, stdout=self._log_file, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise SandboxError(f"sandbox exited early:\n{self.log_text()}")
            try:
                if requests.get(self.base_url + "/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        raise SandboxError(f"sandbox did not answer /health in {timeout}s:\n{self.log_text()}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        self._process = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        self.http.close()
        shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    # -- control API -------------------------------------------------------------------

    def control(self, method: str, path: str, json: Any = None, **params: Any) -> Any:
        response = self.http.request(
            method, self.control_url + path, json=json, params=params or None, timeout=30
        )
        if response.status_code >= 400:
            raise SandboxError(f"{method} {path} -> {response.status_code}: {response.text}")
        return response.json()

    def reset(self, *, keep_accounts: bool = False) -> None:
        self.control("POST", "/reset", {"keep_accounts": keep_accounts})

    def register_client(
        self, client_id: str, secret: str, redirect_url: str, name: str = ""
    ) -> dict:
        body = {
            "client_id": client_id,
            "client_secret": secret,
            "redirect_url": redirect_url,
            "name": name,
        }
        return self.control("POST", "/clients", body)

    def create_seller(self, username: str, password: str, name: str = "") -> dict:
        return self.control(
            "POST", "/sellers", {"username": username, "password": password, "name": name}
        )

    def mint_code(
        self, client_id: str, seller: str, redirect_url: str | None = None, state: str = ""
    ) -> str:
        """A fresh authorization code, exactly as the seller's Approve would give."""
        body = {"client_id": client_id, "seller": seller, "redirect_url": redirect_url}
        return self.control("POST", "/codes", {**body, "state": state})["code"]

    def mint_tokens(self, client_id: str, seller: str) -> dict:
        """A new grant's token response (access_token, refresh_token, ..., grant_id)."""
        return self.control("POST", "/tokens", {"client_id": client_id, "seller": seller})

    def set_faults(self, *rules: dict, **rule: Any) -> list[dict]:
        """Add fault rules: ``set_faults(endpoint="put_order", kind="500", count=2)`` or
        ``set_faults({...}, {...})``. Returns all rules now active."""
        specs = list(rules) + ([rule] if rule else [])
        return self.control("POST", "/faults", {"faults": specs})["faults"]

    def faults(self) -> list[dict]:
        return self.control("GET", "/faults")["faults"]

    def clear_faults(self) -> None:
        self.control("DELETE", "/faults")

    def shift_clock(self, seconds: float) -> dict:
        return self.control("POST", "/clock", {"shift_seconds": seconds})

    def set_rotation(self, enabled: bool) -> None:
        self.control("POST", "/rotation", {"enabled": enabled})

    def set_auto_ship(self, seconds: float | None) -> None:
        self.control("POST", "/auto-ship", {"seconds": seconds})

    def revoke(self, seller: str, client_id: str | None = None) -> int:
        body = {"client_id": client_id} if client_id else {}
        return self.control("POST", f"/sellers/{seller}/revoke", body)["revoked"]

    def expire_tokens(self, seller: str | None = None) -> int:
        return self.control("POST", "/tokens/expire", {"seller": seller} if seller else {})[
            "expired"
        ]

    def ship(self, mp_order_number: str, **spec: Any) -> dict:
        """Simulated seller ships: ``lines=[{"mp_line_number", "quantity", "split"}]``,
        ``carrier``, ``split``, ``bad`` (see sandbox/README.md). Returns the fulfillments."""
        return self.control("POST", f"/orders/{mp_order_number}/ship", spec)

    def cancel(self, mp_order_number: str, **spec: Any) -> dict:
        return self.control("POST", f"/orders/{mp_order_number}/cancel", spec)

    def state(self, **params: Any) -> dict:
        return self.control("GET", "/state", **params)

    def order(self, mp_order_number: str, **params: Any) -> dict:
        return self.control("GET", f"/orders/{mp_order_number}", **params)

    def requests_log(self, **params: Any) -> list[dict]:
        """Recent requests (``endpoint=``, ``path=``, ``since_seq=``, ``limit=``)."""
        return self.control("GET", "/requests", **params)["requests"]
