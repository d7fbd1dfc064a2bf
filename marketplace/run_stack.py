"""``make run``'s process manager: honcho, told to wait longer before it SIGKILLs.

honcho stops the Procfile's processes with SIGTERM and SIGKILLs whatever still runs 5 s
later (a constant, no option). Celery's warm shutdown of an idle worker takes 5-9 s here:
its consumer first finishes a blocking poll of the broker (2 s at a time on the file
broker), then stops its pool. So honcho killed the worker's wrapper on every Ctrl-C
("sending SIGKILL to worker.1") and a running task was cut short instead of finished.

Usage: ``python -m marketplace.run_stack start -f Procfile`` (honcho's own arguments).
"""

from __future__ import annotations

import sys

from honcho import manager
from honcho.command import main

# Above the worker's idle shutdown, short enough that a stuck process still goes.
KILL_WAIT_SECONDS = 12

if __name__ == "__main__":
    manager.KILL_WAIT = KILL_WAIT_SECONDS
    sys.exit(main())
