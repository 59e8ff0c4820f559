"""A process inside a PID namespace, as the judge outside sees it.

The zygote inside bubblewrap names its workers by their pid in the sandbox; the judge needs
their pid outside to read their clocks (`grader.sandbox.clock`) and to stop them. The kernel
says both: each child of the zygote lists its pid in every namespace it is in (`NSpid` in
/proc/PID/status, outermost first).

    outer_pid(zygote_pid=41230, inner=7)   # -> 41288, the child of 41230 whose NSpid ends in 7
"""

from __future__ import annotations

import os


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(n) for n in handle.read().split()]
    except (OSError, ValueError):
        return [int(n) for n in os.listdir("/proc") if n.isdigit() and _parent(int(n)) == pid]
    return found


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _ns_pids(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return [int(n) for n in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def outer_pid(zygote_pid: int, inner: int) -> int | None:
    """The pid, as this process sees it, of the zygote's child whose pid inside is `inner`."""
    for child in _children(zygote_pid):
        ns = _ns_pids(child)
        if ns and ns[-1] == inner:
            return child
    return None


__all__ = ["outer_pid"]
