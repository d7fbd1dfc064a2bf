"""``make run``'s supervisor (``marketplace.run_stack``): a worker killed mid-task comes back
and its work completes; a process that keeps dying, or one that must not exit, stops the
stack with exit code 1 and a line naming it. (Ctrl-C: ``test_make_run_stops.py``.)"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from marketplace.config_checks import metrics_token_problem
from marketplace.run_stack import DEVELOPMENT_METRICS_TOKEN, development_metrics_token
from tests.stack.stack_process import Stack, celery_worker_main

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")

PY = sys.executable


def _procfile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "Procfile"
    path.write_text(text)
    return path


def test_a_process_that_keeps_dying_stops_the_stack_with_1_naming_it(tmp_path: Path) -> None:
    procfile = _procfile(
        tmp_path,
        f"steady: {PY} -c 'import time; time.sleep(120)'\n"
        f"flaky: {PY} -c 'print(\"flaky: cannot go on\"); raise SystemExit(3)'\n",
    )
    stack = Stack(
        tmp_path,
        procfile=procfile,
        RUN_STACK_RESTART="flaky",
        RUN_STACK_MAX_RESTARTS="3",
        RUN_STACK_BACKOFF="0.1",
    )
    stack.start()
    assert stack.process is not None
    code = stack.process.wait(timeout=60)
    text = stack.log_text()
    assert code == 1, text
    # Each restart is logged with the process's name and exit code, with a growing wait.
    assert "flaky.1 exited with code 3; restarting it in 0.1 s (restart 1 of 3" in text
    assert "flaky.1 exited with code 3; restarting it in 0.4 s (restart 3 of 3" in text
    # Then the stack gives up, stops the others and says who, why and what it printed last.
    assert "flaky.1 exited with code 3, after 3 restarts within 600 s: giving up" in text
    assert "sending SIGTERM to steady.1" in text
    last = text[text.index("STACK STOPPED: flaky.1") :]
    assert "Its last 4 lines:" in last
    assert "flaky: cannot go on" in last
    assert stack.leftovers() == []


def test_a_process_that_must_not_exit_stops_the_stack_at_once(tmp_path: Path) -> None:
    procfile = _procfile(
        tmp_path,
        f"worker: {PY} -c 'import time; time.sleep(120)'\n"
        f"web: {PY} -c 'print(\"web: port taken\"); raise SystemExit(0)'\n",
    )
    stack = Stack(tmp_path, procfile=procfile)
    stack.start()
    assert stack.process is not None
    code = stack.process.wait(timeout=60)
    text = stack.log_text()
    # Even an exit code 0 is a failure for web: honcho used to exit 0 here.
    assert code == 1, text
    assert "STACK STOPPED: web.1 exited with code 0; it must keep running" in text
    assert "web: port taken" in text.split("STACK STOPPED", 1)[1]
    assert "restarting" not in text
    assert stack.leftovers() == []


@pytest.mark.slow
def test_a_worker_killed_mid_push_is_restarted_and_the_push_completes(tmp_path: Path) -> None:
    # Given the stack (sandbox, worker, beat; the recovery pace of tests.stack.stack_settings),
    # a connected seller, and a platform that answers each order PUT after 6 s
    settings = "DJANGO_SETTINGS_MODULE=tests.stack.stack_settings"
    procfile = _procfile(
        tmp_path,
        "sandbox: python -m sandbox serve --port ${SANDBOX_PORT}\n"
        f"worker: {settings} python -m marketplace.run_alone celery -A marketplace worker"
        " --loglevel INFO --concurrency 2 --hostname worker@%h\n"
        f"beat: {settings} celery -A marketplace beat --loglevel INFO\n",
    )
    stack = Stack(tmp_path, procfile=procfile)
    stack.prepare()
    stack.start()
    try:
        stack.wait_for_text("ready.", timeout=90)
        stack.wait_until(stack.sandbox_up, 60, "the sandbox")
        stack.connect_seller()
        stack.control(
            "POST",
            "/faults",
            {"faults": [{"endpoint": "put_order", "kind": "latency", "latency_ms": 6000}]},
        )
        stack.run("manage.py", "demo_orders", "--seller", "seller", "--count", "3")

        # When the worker's main process is SIGKILLed while its drain holds the orders
        # (claimed in the database, their PUTs in flight)
        claimed = "SELECT COUNT(*) FROM orders_ordersync WHERE claim_token != ''"
        stack.wait_until(lambda: stack.query(claimed)[0][0] == 3, 60, "the pushes in flight")
        assert stack.process is not None
        os.kill(celery_worker_main(stack.process.pid), signal.SIGKILL)
        # (the pushes were cut short: the orders are still claimed, none synced)
        assert stack.query(claimed)[0][0] == 3
        assert stack.sync_counts() == {"pending": 3}
        stack.control("DELETE", "/faults")

        # Then the supervisor restarts the worker, naming it and its exit code ...
        stack.wait_for_text("worker.1 exited with code 137 (SIGKILL); restarting it in 1 s")
        stack.wait_for_text("ready.", timeout=90, count=2)
        # ... and the work is not lost: the claims lapse, the sweeper re-queues them and
        # every order reaches the platform (the database is the truth, DESIGN.md).
        stack.wait_until(lambda: stack.sync_counts() == {"synced": 3}, 120, "every order synced")
        assert stack.process is not None
        assert stack.process.poll() is None, stack.tail()
    finally:
        code = stack.stop()
    text = stack.log_text()
    assert code == 0, text
    assert "STACK STOPPED" not in text
    assert stack.leftovers() == []


def test_make_run_gives_metrics_a_development_token_only_in_development(
    tmp_path: Path,
) -> None:
    no_env_file = tmp_path / ".env"
    # Development (the default) without a token: the dev token, for the stack's processes
    environ: dict[str, str] = {}
    assert development_metrics_token(environ, no_env_file) == DEVELOPMENT_METRICS_TOKEN
    assert environ["METRICS_TOKEN"] == DEVELOPMENT_METRICS_TOKEN
    # Production can never start with it: its config check refuses a short token
    assert metrics_token_problem(DEVELOPMENT_METRICS_TOKEN)
    # A token already set is kept
    environ = {"DJANGO_ENV": "development", "METRICS_TOKEN": "mine"}
    assert development_metrics_token(environ, no_env_file) == ""
    assert environ["METRICS_TOKEN"] == "mine"
    # Production or test: nothing is set, from the shell or from .env
    for django_env in ("production", "test"):
        environ = {"DJANGO_ENV": django_env}
        assert development_metrics_token(environ, no_env_file) == ""
        assert "METRICS_TOKEN" not in environ
    no_env_file.write_text("# the stack's settings\nDJANGO_ENV=production\n")
    environ = {}
    assert development_metrics_token(environ, no_env_file) == ""
    assert "METRICS_TOKEN" not in environ
    no_env_file.write_text("METRICS_TOKEN='from-env-file'\n")
    assert development_metrics_token({}, no_env_file) == ""
