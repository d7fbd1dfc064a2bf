"""``make run``'s process manager: honcho's Procfile runner with a supervisor's loop.

honcho reads the Procfile (and ``.env``) and starts every process; on its own it stopped
the whole stack as soon as one process exited, and exited with that process's code (0
when the worker stopped "cleanly" after a broker error), so a dead worker took the
sandbox, the web app and beat with it and ``make run`` said nothing was wrong. Here:

* **Restarted**: ``worker``, ``beat`` and ``seller`` (the simulated seller). A process
  that exits is started again after a backoff (1, 2, 4, 8, 16 s), at most 5 times within
  10 minutes; each restart is logged with the process's name and exit code.
* **Must not exit**: every other process (``web``, ``sandbox``). If one exits, or a
  restarted process runs out of restarts, the stack stops every process and exits **1**
  with a line naming the process, its exit code and its last 20 log lines.
* **Ctrl-C / SIGTERM**: every process gets SIGTERM (its process group; the worker's
  wrapper ``marketplace.run_alone`` passes it to Celery's main process only), the stack
  waits for them and exits **0**. Whatever still runs after ``KILL_WAIT_SECONDS`` is
  SIGKILLed (it never is normally: Celery's warm shutdown of an idle worker takes 5-9 s
  here; honcho's own 5 s cut it short), and so is everything on a second Ctrl-C.

Usage: ``python -m marketplace.run_stack start -f Procfile`` (honcho's own arguments).
Tunable from the environment (tests use it): ``RUN_STACK_RESTART`` (comma-separated
process types, default ``worker,beat,seller``), ``RUN_STACK_MAX_RESTARTS`` (5),
``RUN_STACK_RESTART_WINDOW`` (600 s), ``RUN_STACK_BACKOFF`` (first wait, 1 s; doubles,
at most 30 s).
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from honcho import command, manager

# Above the worker's idle shutdown, short enough that a stuck process still goes.
KILL_WAIT_SECONDS = 12
# /metrics's token under make run in development (see development_metrics_token).
DEVELOPMENT_METRICS_TOKEN = "dev-metrics-token"
TAIL_LINES = 20
BACKOFF_CAP_SECONDS = 30.0
EXIT_FAILED = 1


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


@dataclass(frozen=True)
class RestartPolicy:
    restartable: frozenset[str]
    max_restarts: int = 5
    window_seconds: float = 600.0
    backoff_seconds: float = 1.0

    @classmethod
    def from_environment(cls) -> RestartPolicy:
        names = os.environ.get("RUN_STACK_RESTART", "worker,beat,seller")
        return cls(
            restartable=frozenset(n.strip() for n in names.split(",") if n.strip()),
            max_restarts=int(_env_float("RUN_STACK_MAX_RESTARTS", 5)),
            window_seconds=_env_float("RUN_STACK_RESTART_WINDOW", 600.0),
            backoff_seconds=_env_float("RUN_STACK_BACKOFF", 1.0),
        )

    def may_restart(self, name: str) -> bool:
        # honcho names processes "<type>.<n>" (worker.1); the policy speaks of types.
        return name.rsplit(".", 1)[0] in self.restartable

    def backoff(self, restarts_in_window: int) -> float:
        return min(self.backoff_seconds * 2.0**restarts_in_window, BACKOFF_CAP_SECONDS)


@dataclass
class _Watch:
    tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=100))
    restarts: collections.deque[float] = field(default_factory=collections.deque)
    restart_at: float | None = None


def exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "an unknown code"
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    if returncode > 128:
        try:
            return f"code {returncode} ({signal.Signals(returncode - 128).name})"
        except ValueError:
            pass
    return f"code {returncode}"


# honcho ships no type information: its Manager is Any to mypy, so subclassing it is
# allowed here by name (the methods below are typed all the same).
class Supervisor(manager.Manager):  # type: ignore[misc]
    """honcho's Manager whose loop restarts what may be restarted (see the module doc)."""

    def __init__(self, printer: Any = None, policy: RestartPolicy | None = None) -> None:
        super().__init__(printer)
        self.policy = policy or RestartPolicy.from_environment()
        self._watch: dict[str, _Watch] = collections.defaultdict(_Watch)
        self._failure: str | None = None
        self._failed_name: str | None = None
        self._kill_at: float | None = None
        self._terminating: bool = False

    def loop(self) -> None:
        def stop_requested(signum: int, frame: FrameType | None) -> None:
            name = signal.Signals(signum).name
            if self._terminating and self._failure is None:
                # A second Ctrl-C: the person does not want to wait for a warm shutdown.
                self._system_print(f"{name} received again: killing what still runs\n")
                self.kill()
                return
            self._system_print(f"{name} received: stopping\n")
            self.terminate()

        signal.signal(signal.SIGTERM, stop_requested)
        signal.signal(signal.SIGINT, stop_requested)
        self._start()
        while True:
            try:
                message = self.events.get(timeout=0.1)
            except queue.Empty:
                if self._terminating and self._none_running():
                    break
            else:
                self._handle(message)
            self._restart_due()
            if self._kill_at is not None and time.monotonic() > self._kill_at:
                self._kill_at = None
                self.kill()
        self.returncode = EXIT_FAILED if self._failure else 0
        if self._failure:
            self._report_failure()

    # -- events ------------------------------------------------------------------------

    def _handle(self, message: Any) -> None:
        name = message.name
        if message.type == "line":
            self._printer.write(message)
            if name in self._processes:
                text = message.data
                if isinstance(text, bytes):
                    text = text.decode("utf-8", errors="replace")
                self._watch[name].tail.append(text.rstrip("\n"))
        elif message.type == "start":
            self._processes[name]["pid"] = message.data["pid"]
            self._system_print(f"{name} started (pid={message.data['pid']})\n")
            if self._terminating:  # it was starting when the stop began
                self._system_print(f"sending SIGTERM to {name} (pid {message.data['pid']})\n")
                self._procmgr.terminate(message.data["pid"])
        elif message.type == "stop":
            returncode = message.data["returncode"]
            self._processes[name]["returncode"] = returncode
            self._processes[name]["process"].join(timeout=5)
            if self._terminating:
                self._system_print(f"{name} stopped ({exit_description(returncode)})\n")
            else:
                self._exited(name, returncode)

    def _exited(self, name: str, returncode: int | None) -> None:
        how = exit_description(returncode)
        if not self.policy.may_restart(name):
            self._fail(name, f"{name} exited with {how}; it must keep running")
            return
        watch = self._watch[name]
        now = time.monotonic()
        while watch.restarts and now - watch.restarts[0] > self.policy.window_seconds:
            watch.restarts.popleft()
        if len(watch.restarts) >= self.policy.max_restarts:
            self._fail(
                name,
                f"{name} exited with {how}, after {len(watch.restarts)} restarts within "
                f"{self.policy.window_seconds:.0f} s: giving up",
            )
            return
        wait = self.policy.backoff(len(watch.restarts))
        watch.restarts.append(now)
        watch.restart_at = now + wait
        self._system_print(
            f"{name} exited with {how}; restarting it in {wait:g} s "
            f"(restart {len(watch.restarts)} of {self.policy.max_restarts} "
            f"allowed within {self.policy.window_seconds:.0f} s)\n"
        )

    def _fail(self, name: str, reason: str) -> None:
        if self._failure is None:
            self._failure, self._failed_name = reason, name
        self._system_print(reason + ": stopping the stack\n")
        self.terminate()

    def _report_failure(self) -> None:
        assert self._failure is not None
        assert self._failed_name is not None
        tail = list(self._watch[self._failed_name].tail)[-TAIL_LINES:]
        said = f"Its last {len(tail)} lines:" if tail else "It printed nothing."
        self._system_print(
            f"STACK STOPPED: {self._failure}. {said}\n" + "".join(f"    {line}\n" for line in tail)
        )

    # -- processes ---------------------------------------------------------------------

    def _restart_due(self) -> None:
        if self._terminating:
            return
        now = time.monotonic()
        for name, watch in self._watch.items():
            if watch.restart_at is not None and watch.restart_at <= now:
                watch.restart_at = None
                self._start_one(name)

    def _start(self) -> None:
        for name in self._processes:
            self._start_one(name)

    def _start_one(self, name: str) -> None:
        entry = self._processes[name]
        entry.pop("pid", None)
        entry.pop("returncode", None)
        entry["process"] = multiprocessing.Process(
            name=name, target=entry["obj"].run, args=(self.events, True)
        )
        entry["process"].start()

    def _none_running(self) -> bool:
        """No process is running or starting (a pending restart is dropped on stop)."""
        return all(
            "returncode" in entry or "process" not in entry for entry in self._processes.values()
        )

    def terminate(self) -> None:
        if self._terminating:
            return
        self._terminating = True
        for watch in self._watch.values():
            watch.restart_at = None
        self._kill_at = time.monotonic() + KILL_WAIT_SECONDS
        self._killall()

    def _killall(self, force: bool = False) -> None:
        for name, entry in self._processes.items():
            if "returncode" in entry or "pid" not in entry:
                continue
            self._system_print(
                f"sending {'SIGKILL' if force else 'SIGTERM'} to {name} (pid {entry['pid']})\n"
            )
            if force:
                self._procmgr.kill(entry["pid"])
            else:
                self._procmgr.terminate(entry["pid"])


def _env_file_values(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of the ``.env`` honcho also reads (its values win over the
    shell's, as honcho's do)."""
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        name, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and name and not name.startswith("#"):
            values[name.strip()] = value.strip().strip("'\"")
    return values


def development_metrics_token(
    environ: MutableMapping[str, str], env_file: Path = Path(".env")
) -> str:
    """Under ``make run`` in development, give ``/metrics`` a token so the README's scrape
    works on a fresh checkout (without one the endpoint answers 404). Only when
    ``DJANGO_ENV`` is development (its default) and no token is set: the stack's processes
    inherit it. It is short on purpose: production's start refuses a token under 32
    characters (``marketplace.config_checks``), so it can never pass there. Returns the
    token set, or "" when none was."""
    seen = {**environ, **_env_file_values(env_file)}
    if seen.get("DJANGO_ENV", "development") != "development" or seen.get("METRICS_TOKEN"):
        return ""
    environ["METRICS_TOKEN"] = DEVELOPMENT_METRICS_TOKEN
    return DEVELOPMENT_METRICS_TOKEN


def main() -> None:
    token = development_metrics_token(os.environ)
    if token:
        print(
            f"  /metrics (development only): METRICS_TOKEN={token}\n"
            f'  curl -sS -H "Authorization: Bearer {token}" '
            f"http://127.0.0.1:{os.environ.get('APP_PORT', '8000')}/metrics\n",
            flush=True,
        )
    manager.KILL_WAIT = KILL_WAIT_SECONDS
    command.Manager = Supervisor  # honcho's ``start`` builds the manager by this name
    command.main()


if __name__ == "__main__":
    main()
