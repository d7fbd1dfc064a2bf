"""Every shell command of the README works, as written, against the stack ``make run`` starts.

The commands are read from README.md's fenced ``bash`` blocks, so this test follows the
README. The stack is started as ``make run`` starts it on a fresh checkout (SQLite, the
embedded broker, the demo data of ``make seed``, ``marketplace.run_stack`` over the
Procfile) on free ports, which replace the README's 8000 and 8100. The seller connects
over HTTP, as the README's "To see the whole flow" has them do in a browser. Each block
then runs in ``bash -euo pipefail``, so a failing command (and, as the README's curl
commands pass ``--fail-with-body``, an HTTP error) fails the test.

Left out: the commands in ``EXEMPT``, each with its reason.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent

# A command starting with one of these (after any VAR=value assignments) is not run.
EXEMPT = {
    "make run": "starts the whole stack and runs until Ctrl-C: this test starts that stack",
    "make sandbox": "starts the sandbox and runs until Ctrl-C: this test starts it",
    "make test": "runs the whole suite, this test included",
    "make bench": "the benchmarks: minutes of load, run on their own",
    "make soak": "the soak test: minutes of load, run on their own",
}
README_APP = "127.0.0.1:8000"
README_SANDBOX = "127.0.0.1:8100"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="starts a process group (POSIX)"),
]


@dataclass
class Block:
    line: int  # where it starts in README.md
    commands: list[str]  # logical commands (continuation lines joined)
    exempt: list[str]


def _logical_lines(text: str) -> list[str]:
    commands: list[str] = []
    current = ""
    for raw in text.splitlines():
        if not current and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        current += raw + "\n"
        if not raw.rstrip().endswith("\\"):
            commands.append(current.rstrip("\n"))
            current = ""
    if current:
        commands.append(current.rstrip("\n"))
    return commands


def _exempt_reason(command: str) -> str | None:
    words = command.replace("\\\n", " ").split()
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
        words.pop(0)  # VAR=value before the command
    head = " ".join(words[:2])
    return EXEMPT.get(head)


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```bash\n(.*?)^```$", text, re.M | re.S):
        line = text.count("\n", 0, match.start()) + 1
        run, exempt = [], []
        for command in _logical_lines(match.group(1)):
            (exempt if _exempt_reason(command) else run).append(command)
        blocks.append(Block(line, run, exempt))
    return blocks


def test_the_readmes_commands_are_found_and_every_exemption_is_used() -> None:
    blocks = readme_blocks()
    assert sum(len(b.commands) for b in blocks) >= 10, blocks
    exempted = {_exempt_reason(c) for b in blocks for c in b.exempt}
    # make run and make test are in the README; the list names only what it needs
    assert EXEMPT["make run"] in exempted
    assert EXEMPT["make test"] in exempted
    for block in blocks:
        for command in block.commands:
            if "curl " in command:
                assert "--fail-with-body" in command, command
                assert "-sS" in command, command


# --- the stack ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Stack:
    app: str
    sandbox: str
    env: dict[str, str]
    log: Path

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


def _wait_until(check: object, what: str, stack_log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    pytest.fail(f"{what} did not happen in {timeout} s:\n{stack_log.read_text(errors='replace')}")


def _connect_seller(stack: Stack) -> None:
    """The README's browser steps over HTTP: sign in as seller, Connect, sign in at the
    sandbox as demo-seller, Approve."""

    def csrf(session: requests.Session, cookie: str) -> str:
        return session.cookies.get(cookie) or ""

    web = requests.Session()
    login = f"http://{stack.app}/sellers/login/"
    web.get(login, timeout=10).raise_for_status()
    signed_in = web.post(
        login,
        data={
            "username": "seller",
            "password": "seller-demo-pass",
            "csrfmiddlewaretoken": csrf(web, "csrftoken"),
        },
        headers={"Referer": login},
        timeout=10,
    )
    signed_in.raise_for_status()
    connection = f"http://{stack.app}/sellers/connection/"
    web.get(connection, timeout=10).raise_for_status()
    to_platform = web.post(
        f"http://{stack.app}/sellers/connection/connect/",
        data={"csrfmiddlewaretoken": csrf(web, "csrftoken")},
        headers={"Referer": connection},
        allow_redirects=False,
        timeout=10,
    )
    assert to_platform.status_code == 302, to_platform.text[:2000]
    authorize = to_platform.headers["Location"]
    assert authorize.startswith(f"http://{stack.sandbox}/"), authorize

    platform = requests.Session()
    platform.get(authorize, timeout=10).raise_for_status()
    query = parse_qs(urlsplit(authorize).query)
    fields = {
        name: query[name][0] for name in ("response_type", "client_id", "redirect_url", "state")
    }
    token = {"csrfmiddlewaretoken": csrf(platform, "sandbox_csrftoken")}
    consent = platform.post(
        authorize,
        data={
            **fields,
            **token,
            "action": "signin",
            "username": "demo-seller",
            "password": "demo-seller-pass",
        },
        headers={"Referer": authorize},
        timeout=10,
    )
    assert 'id="approve-button"' in consent.text, consent.text[:2000]
    approved = platform.post(
        authorize,
        data={**fields, **token, "action": "approve"},
        headers={"Referer": authorize},
        allow_redirects=False,
        timeout=10,
    )
    assert approved.status_code == 302, approved.text[:2000]
    back = web.get(approved.headers["Location"], timeout=30)
    back.raise_for_status()
    page = web.get(connection, timeout=10).text
    assert "Connected" in page or "connected" in page, page[:3000]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("readme")
    app_port, sandbox_port = _free_port(), _free_port()
    skipped = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "SANDBOX_DATABASE_URL")
    env = {
        **{k: v for k, v in os.environ.items() if k not in skipped},
        # What `make run` gets on a fresh checkout: SQLite and the embedded file broker.
        "DJANGO_ENV": "development",
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "CELERY_DATA_DIR": str(tmp / "celery"),
        "SANDBOX_DATABASE_URL": str(tmp / "sandbox.sqlite3"),
        "APP_PORT": str(app_port),
        "SANDBOX_PORT": str(sandbox_port),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    }

    def run(*command: str) -> None:
        subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=300, capture_output=True)

    # `make seed`, as the Makefile has it
    run(sys.executable, "manage.py", "migrate", "--noinput", "-v", "0")
    run(sys.executable, "manage.py", "seed_demo")
    run(sys.executable, "-m", "sandbox", "create-api-user", "--seller", "demo-seller",
        "--username", "demo-seller-api", "--password", "demo-seller-api-pass",
        "--client-id", "100001")  # fmt: skip
    log = tmp / "stack.log"
    with log.open("wb") as out:
        honcho = subprocess.Popen(
            [sys.executable, "-m", "marketplace.run_stack", "start", "-f", "Procfile"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    found = Stack(f"127.0.0.1:{app_port}", f"127.0.0.1:{sandbox_port}", env, log)
    try:
        _wait_until(
            lambda: (
                requests.get(f"http://{found.app}/healthz", timeout=1).ok
                and requests.get(f"http://{found.sandbox}/health", timeout=1).ok
                and "ready." in log.read_text(errors="replace")
            ),
            "the stack's start",
            log,
        )
        _connect_seller(found)
        yield found
    finally:
        if honcho.poll() is None:
            honcho.send_signal(signal.SIGINT)
            try:
                honcho.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(honcho.pid, signal.SIGKILL)
                honcho.wait(timeout=5)


@pytest.mark.parametrize("block", readme_blocks(), ids=lambda b: f"README.md:{b.line}")
def test_the_readmes_commands_work_against_the_stack(stack: Stack, block: Block) -> None:
    if not block.commands:
        pytest.skip("only exempt commands: " + "; ".join(block.exempt))
    script = "\n".join(block.commands)
    script = script.replace(README_APP, stack.app).replace(README_SANDBOX, stack.sandbox)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-xc", script],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (
        f"README.md:{block.line}: a command failed (exit {done.returncode})\n"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr (the commands, traced)\n"
        f"{done.stderr[-4000:]}\n--- the stack's log\n{stack.log_tail()}"
    )
