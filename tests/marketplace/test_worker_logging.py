"""A real Celery worker process logs through ``settings.LOGGING``: its redaction filter
holds, and Celery's ``--loglevel`` does not override ``LOG_LEVEL``.

Without the ``setup_logging`` receiver in ``marketplace/celery.py`` the worker replaced
Django's handlers with its own (no filter): a bearer token in a worker's log line went
out in clear.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Starts a worker on a queue of its own (it takes no other test's messages), logs a
# token and an INFO line once the worker is ready, and leaves.
PROBE = textwrap.dedent(
    """
    import logging, os, sys
    from celery.signals import worker_ready
    from marketplace.celery import app

    @worker_ready.connect
    def probe(**kwargs):
        log = logging.getLogger("marketplace.probe")
        log.info("probe info line")
        log.warning("calling with Authorization: Bearer sekrit-probe-token-42")
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(0)

    app.worker_main(
        ["worker", "--loglevel", "ERROR", "--pool", "solo", "-Q", "probe-logging-only",
         "--without-heartbeat", "--without-gossip", "--without-mingle"]
    )
    """
)


@pytest.mark.slow
def test_a_worker_process_logs_through_the_redacting_handler() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "INFO"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "sekrit-probe-token-42" not in output
    assert "Bearer [REDACTED]" in output
    # --loglevel ERROR did not silence LOG_LEVEL's INFO lines.
    assert "probe info line" in output
