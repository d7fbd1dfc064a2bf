"""Run a command so that a stop signal reaches only its main process: ``make run`` uses it
for the Celery worker.

honcho stops a process by signalling its whole process group. For the worker that group
holds the prefork pool's children too: they died of the SIGTERM at once, the worker
logged "ForkPoolWorker exited with signal 15" as an ERROR, and its warm shutdown could
not finish before honcho's SIGKILL. Here the command runs in a group of its own and only
its main process is told to stop; it then stops its children itself, cleanly.

If this wrapper itself is killed, the command gets SIGTERM from the kernel (Linux's
parent-death signal) rather than running on, orphaned, beside the worker that
``make run`` starts in its place. The wrapper exits with the command's code, or 128 + the
signal's number when a signal ended it (137 for SIGKILL), as a shell would.

Usage: ``python -m marketplace.run_alone celery -A marketplace worker ...``
"""

from __future__ import annotations

import signal
import subprocess
import sys
from types import FrameType


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m marketplace.run_alone COMMAND [ARGS...]", file=sys.stderr)
        return 2
    child = subprocess.Popen(argv, start_new_session=True, preexec_fn=_stop_with_parent)

    def forward(signum: int, frame: FrameType | None) -> None:
        # Celery's warm shutdown: finish the running tasks, then stop the pool.
        child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    returncode = child.wait()
    return 128 - returncode if returncode < 0 else returncode


def _stop_with_parent() -> None:
    """In the child, before it runs the command: SIGTERM it when this wrapper dies."""
    try:
        from billiard.util import set_pdeathsig  # type: ignore[attr-defined]  # stubs lag

        set_pdeathsig(signal.SIGTERM)
    except (ImportError, OSError):
        pass  # not Linux: the command outlives a killed wrapper, as before


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
