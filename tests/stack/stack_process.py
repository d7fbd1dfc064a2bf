"""The stack as ``make run`` runs it (``python -m marketplace.run_stack``), for tests.

Embedded: a SQLite file and the embedded broker in a temporary folder, free ports, no
``DATABASE_URL``/``REDIS_URL`` from the test run, so nothing collides with other runs on
the machine. Every process of a stack carries the temporary folder's path in its
environment, which is how ``leftovers()`` finds what is still running.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from tests.support.sandbox_process import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

_CONNECT = """
import requests
from django.conf import settings
from marketplace.platform.oauth import TokenSet
from sellers.models import Seller
from sellers.services import connection_grant_store

issued = requests.post(
    "{control}/tokens",
    json={{"client_id": settings.PLATFORM_CLIENT_ID, "seller": "{platform_seller}"}},
    timeout=10,
).json()
tokens = TokenSet(
    access_token=issued["access_token"],
    refresh_token=issued["refresh_token"],
    expires_in=int(issued["expires_in"]),
)
seller = Seller.objects.get(user__username="{seller}")
connection_grant_store(seller=seller, tokens=tokens, actor=None)
"""


class Stack:
    def __init__(self, workdir: Path, *, procfile: Path | None = None, **env: str) -> None:
        self.workdir = workdir
        self.procfile = procfile or ROOT / "Procfile"
        self.app_port, self.sandbox_port = free_port(), free_port()
        self.db_path = workdir / "db.sqlite3"
        self.celery_dir = workdir / "celery"
        self.log_path = workdir / "stack.log"
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")
            },
            # What `make run` gets on a fresh checkout: SQLite and the embedded broker.
            "DJANGO_ENV": "development",
            "DATABASE_URL": f"sqlite:///{self.db_path}",
            "CELERY_DATA_DIR": str(self.celery_dir),
            "SANDBOX_DATABASE_URL": str(workdir / "sandbox.sqlite3"),
            "APP_PORT": str(self.app_port),
            "SANDBOX_PORT": str(self.sandbox_port),
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process: subprocess.Popen | None = None
        self._log: Any = None

    @property
    def sandbox_url(self) -> str:
        return f"http://127.0.0.1:{self.sandbox_port}"

    def run(self, *args: str, timeout: float = 180) -> str:
        done = subprocess.run(
            [sys.executable, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def prepare(self, *, seed: bool = True) -> None:
        """``make migrate`` and ``make seed`` on this stack's database."""
        self.run("manage.py", "migrate", "--noinput", "-v", "0")
        if seed:
            self.run("manage.py", "seed_demo")
            self.run(
                "-m", "sandbox", "create-api-user", "--seller", "demo-seller",
                "--username", "demo-seller-api", "--password", "demo-seller-api-pass",
                "--client-id", "100001",
            )  # fmt: skip

    def start(self) -> None:
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "marketplace.run_stack", "start", "-f", str(self.procfile)],
            cwd=ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the stack only, as in a terminal
        )

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_until(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = check()
            if result:
                return result
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"the stack exited while waiting for {what}:\n{self.tail()}")
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}:\n{self.tail()}")

    def wait_for_text(self, text: str, timeout: float = 60, *, count: int = 1) -> None:
        self.wait_until(lambda: self.log_text().count(text) >= count, timeout, repr(text))

    def sandbox_up(self) -> bool:
        try:
            return requests.get(self.sandbox_url + "/health", timeout=1).ok
        except requests.RequestException:
            return False

    def control(self, method: str, path: str, body: dict | None = None) -> Any:
        response = requests.request(
            method, f"{self.sandbox_url}/sandbox/api{path}", json=body, timeout=10
        )
        response.raise_for_status()
        return response.json()

    def connect_seller(self, seller: str = "seller", platform_seller: str = "demo-seller") -> None:
        """The seller's platform connection, as after **Connect**: a grant minted at the
        sandbox, stored through the vault."""
        code = _CONNECT.format(
            control=self.sandbox_url + "/sandbox/api",
            seller=seller,
            platform_seller=platform_seller,
        )
        self.run("manage.py", "shell", "-c", code)

    def query(self, sql: str, *params: Any) -> list[tuple]:
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10) as db:
            return db.execute(sql, params).fetchall()

    def sync_counts(self) -> dict[str, int]:
        rows = self.query("SELECT status, COUNT(*) FROM orders_ordersync GROUP BY status")
        return dict(rows)

    def pid_of(self, name: str) -> int:
        """The pid honcho started for ``name`` (``worker.1``), from the stack's log."""
        marker = f"{name} started (pid="
        line = [ln for ln in self.log_text().splitlines() if marker in ln][-1]
        return int(line.split(marker, 1)[1].split(")", 1)[0])

    def stop(self, timeout: float = 30) -> int | None:
        """Ctrl-C; the stack's exit code (None if it had to be killed)."""
        if self.process is None:
            return None
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return None
        finally:
            if self._log is not None:
                self._log.close()
            for pid in self.leftovers():
                os.kill(pid, signal.SIGKILL)

    def leftovers(self) -> list[int]:
        return processes_with(str(self.workdir))

    def tail(self, lines: int = 80) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


def processes_with(marker: str) -> list[int]:
    """Pids whose environment carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def celery_worker_main(stack_pid: int) -> int:
    """The Celery worker's main process under ``pid`` (honcho's shell, then
    ``marketplace.run_alone``, then Celery's main process, then its pool)."""
    found = []
    queue = [stack_pid]
    while queue:
        pid = queue.pop()
        for child in children_of(pid):
            queue.append(child)
            if "marketplace.run_alone" in cmdline(pid) and "worker" in cmdline(child):
                found.append(child)
    assert len(found) == 1, found
    return found[0]
