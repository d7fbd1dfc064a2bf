"""Every shell command of the README works, as written, against the stack ``make run`` starts.

The commands are read from README.md's fenced ``bash`` blocks, so this test follows the
README. The stack is started as ``make run`` starts it on a fresh checkout (SQLite, the
embedded broker, the demo data of ``make seed``, ``marketplace.run_stack`` over the
Procfile: ``tests/stack/stack_process.py``) on free ports, which replace the README's 8000 and
8100. The seller connects over HTTP, as the README's "To see the whole flow" has them do
in a browser. Each block then runs in ``bash -euo pipefail``, so a failing command (and,
as the README's curl commands pass ``--fail-with-body``, an HTTP error) fails the test.

Left out: the commands in ``EXEMPT``, each with its reason.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from tests.stack.stack_process import Stack

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# A command starting with one of these (after any VAR=value assignments) is not run.
EXEMPT = {
    "make run": "starts the whole stack and runs until Ctrl-C: this test starts that stack",
    "make sandbox": "starts the sandbox and runs until Ctrl-C: this test starts it",
    "make test": "runs the whole suite, this test included",
    "make bench": "the benchmarks: minutes of load, run on their own",
    "make soak": "the soak test: minutes of load, run on their own",
    "pg_dump --format=custom": "needs Postgres (the stack here runs on SQLite): the restore "
    "test, tests/marketplace/reconcile/test_restore.py, runs pg_dump and pg_restore",
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


# --- the stack (tests/stack/stack_process.py: make run's, embedded, on free ports) ------------


def _connect_seller(stack: Stack) -> None:
    """The README's browser steps over HTTP: sign in as seller, Connect, sign in at the
    sandbox as demo-seller, Approve."""

    def csrf(session: requests.Session, cookie: str) -> str:
        return session.cookies.get(cookie) or ""

    web = requests.Session()
    login = f"http://{_app(stack)}/sellers/login/"
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
    connection = f"http://{_app(stack)}/sellers/connection/"
    web.get(connection, timeout=10).raise_for_status()
    to_platform = web.post(
        f"http://{_app(stack)}/sellers/connection/connect/",
        data={"csrfmiddlewaretoken": csrf(web, "csrftoken")},
        headers={"Referer": connection},
        allow_redirects=False,
        timeout=10,
    )
    assert to_platform.status_code == 302, to_platform.text[:2000]
    authorize = to_platform.headers["Location"]
    assert authorize.startswith(f"http://{_sandbox(stack)}/"), authorize

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
    found = Stack(tmp_path_factory.mktemp("readme"))
    found.prepare()  # make migrate, make seed
    found.start()  # make run's Procfile under marketplace.run_stack
    try:
        found.wait_until(found.sandbox_up, 60, "the sandbox")
        found.wait_until(lambda: _app_up(found), 60, "the web app")
        found.wait_for_text("ready.")  # the worker
        _connect_seller(found)
        yield found
    finally:
        found.stop()


def _app_up(stack: Stack) -> bool:
    try:
        return requests.get(f"http://{_app(stack)}/healthz", timeout=1).ok
    except requests.RequestException:
        return False


def _app(stack: Stack) -> str:
    return f"127.0.0.1:{stack.app_port}"


def _sandbox(stack: Stack) -> str:
    return f"127.0.0.1:{stack.sandbox_port}"


@pytest.mark.parametrize("block", readme_blocks(), ids=lambda b: f"README.md:{b.line}")
def test_the_readmes_commands_work_against_the_stack(stack: Stack, block: Block) -> None:
    if not block.commands:
        pytest.skip("only exempt commands: " + "; ".join(block.exempt))
    script = "\n".join(block.commands)
    script = script.replace(README_APP, _app(stack)).replace(README_SANDBOX, _sandbox(stack))
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
        f"{done.stderr[-4000:]}\n--- the stack's log\n{stack.tail()}"
    )
