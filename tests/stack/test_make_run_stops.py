"""``make run`` then Ctrl-C: the whole stack (sandbox, web, worker, beat under honcho, as the
Makefile starts it) stops within 10 s, leaves no process behind, kills nothing and logs no
ERROR line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processes_with(marker: str) -> list[int]:
    """Pids whose environment carries ``marker`` (every process of this stack does)."""
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


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find leftover processes")
def test_ctrl_c_stops_every_process_within_10_s_without_an_error_line(tmp_path: Path) -> None:
    app_port, sandbox_port = _free_port(), _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        # What `make run` gets on a fresh checkout: SQLite and the embedded file broker.
        "DJANGO_ENV": "development",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_DATA_DIR": str(tmp_path / "celery"),
        "SANDBOX_DATABASE_URL": str(tmp_path / "sandbox.sqlite3"),
        "APP_PORT": str(app_port),
        "SANDBOX_PORT": str(sandbox_port),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
    )
    log = tmp_path / "honcho.log"
    with log.open("wb") as out:
        honcho = subprocess.Popen(
            [sys.executable, "-m", "marketplace.run_stack", "start", "-f", "Procfile"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches honcho only, as in a terminal
        )
        try:
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline:
                text = log.read_text(errors="replace")
                try:
                    web = requests.get(f"http://127.0.0.1:{app_port}/healthz", timeout=1)
                except requests.RequestException:
                    web = None
                if web is not None and web.ok and "ready." in text and "beat: Starting" in text:
                    break
                time.sleep(0.5)
            else:
                pytest.fail("the stack did not start:\n" + log.read_text(errors="replace"))
            time.sleep(2)  # let beat send its first jobs and the worker run them

            # When: Ctrl-C
            stopped_at = time.monotonic()
            honcho.send_signal(signal.SIGINT)
            honcho.wait(timeout=15)
            took = time.monotonic() - stopped_at
            leftovers = _processes_with(str(tmp_path))
            deadline = time.monotonic() + max(0.0, 10 - took)
            while leftovers and time.monotonic() < deadline:
                time.sleep(0.2)
                leftovers = _processes_with(str(tmp_path))
        finally:
            if honcho.poll() is None:
                os.killpg(honcho.pid, signal.SIGKILL)
    text = log.read_text(errors="replace")
    # Then: every process ended within 10 s ...
    assert took < 10, text
    assert leftovers == [], text
    # ... and nothing was logged as an error (the pool's children no longer die of SIGTERM)
    assert [line for line in text.splitlines() if "ERROR" in line] == [], text
    assert "exited with 'signal 15" not in text
    # ... and nothing had to be killed: the worker finished its warm shutdown
    assert "SIGKILL" not in text, text
