"""Where the CPU went during a measured phase: per process group, read from /proc (Linux).

Wall-clock ratios say *that* a pipeline is slower than its baseline; on a 2-core machine
shared by the sandbox, Postgres, Redis and the workers, CPU seconds per order say *why*.
A group is a process tree (its root pid and every descendant) or every process with a
given command name (``postgres``, ``redis-server``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid → (parent pid, command name, CPU seconds used so far)."""
    found: dict[int, tuple[int, str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # "pid (comm) state ppid ... utime stime" — comm may hold spaces and parentheses.
        comm = raw[raw.index("(") + 1 : raw.rindex(")")]
        rest = raw[raw.rindex(")") + 2 :].split()
        ppid, utime, stime = int(rest[1]), int(rest[11]), int(rest[12])
        found[int(entry.name)] = (ppid, comm, (utime + stime) / _TICKS)
    return found


def _tree(processes: dict[int, tuple[int, str, float]], root: int) -> set[int]:
    members = {root}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _, _) in processes.items():
            if ppid in members and pid not in members:
                members.add(pid)
                grew = True
    return members


@dataclass
class CpuMeter:
    """``trees``: group → root pid (with descendants); ``pids``: group → that process only;
    ``names``: group → command name."""

    trees: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    _before: dict[int, tuple[int, str, float]] = field(default_factory=dict)

    def start(self) -> None:
        self._before = _processes() if Path("/proc/self/stat").exists() else {}

    def stop(self) -> dict[str, float]:
        """CPU seconds each group used since ``start`` (empty where /proc is missing)."""
        if not self._before:
            return {}
        after = _processes()

        def used(pids: set[int]) -> float:
            total = 0.0
            for pid in pids:
                if pid in after:
                    earlier = self._before.get(pid)
                    total += after[pid][2] - (earlier[2] if earlier else 0.0)
            return round(total, 2)

        result = {name: used(_tree(after, root)) for name, root in self.trees.items()}
        result.update({name: used({pid}) for name, pid in self.pids.items()})
        for name, comm in self.names.items():
            result[name] = used({pid for pid, (_, c, _) in after.items() if c == comm})
        return result
