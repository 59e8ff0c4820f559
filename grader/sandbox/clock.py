"""How much of a call's time is the student's: CPU time, and time spent waiting by choice.

A call's wall time is three parts: the worker ran, it waited for a CPU the machine was busy
with (the run queue), or it slept (a `sleep`, a lock, a child it waits for, a read). Only the
first and the last are the student's doing. So the limits that decide points count:

- `cpu`: the CPU time of every process of the student's: the worker, its threads, and every
  process it started, running or ended (where the zygote adopts orphans: Linux, where it is
  their reaper, so an orphan's time ends up in its children's times);
- `idle`: the time the worker was neither running nor waiting for a CPU (Linux: wall time
  minus the worker's CPU time minus its run-queue delay, from /proc/PID/schedstat).

A call fails on time when either passes its limit: an endless loop (or a swarm of busy child
processes) on `cpu`, code that sleeps or waits on `idle`. A busy machine only lengthens the run
queue, which is nobody's limit; the wall-clock backstop (`backstop`) is there for a machine
too overloaded to grade on, which is the grader's problem, never the student's.

Where the kernel gives no run-queue delay (macOS, Windows) `idle` is wall time minus CPU time,
so a busy laptop counts its waiting as idle: the student's own machine, in the practice tier.

    clock = CallClock.start(worker_pid, zygote_pid)
    ...                                    # the call runs
    clock.verdict(limit=10.0)              # None, "cpu", "idle" or "overloaded"
"""

from __future__ import annotations

import os
import time

BACKSTOP_FACTOR = 20.0  # the wall-clock backstop, as a multiple of the call's limit
BACKSTOP_MIN = 120.0    # ... and never below this (seconds)
TREE_EVERY = 1.0        # seconds between walks of the student's whole process tree
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = os.path.isdir("/proc/self/task")


def backstop(limit: float) -> float:
    """The wall time after which a call is the grader's problem: `max(20 * limit, 120)` s.

    >>> backstop(10.0), backstop(60.0)
    (200.0, 1200.0)
    """
    return max(BACKSTOP_FACTOR * limit, BACKSTOP_MIN)


def _stat(pid: int) -> tuple[float, float] | None:
    """(own CPU seconds, children's CPU seconds) of a process from /proc/PID/stat; None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        # after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14)
        return (int(fields[11]) + int(fields[12])) / _TICKS, (int(fields[13]) + int(fields[14])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


def _queued(pid: int) -> float | None:
    """Seconds the process's main thread has waited on a run queue (Linux schedstat), or None."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(n) for n in handle.read().split()]
    except (OSError, ValueError):
        pass
    return found


def tree_cpu(root: int) -> float:
    """CPU seconds of `root`'s descendants (their own and their ended children's), and of the
    children `root` itself has reaped (an orphan adopted by the zygote ends up there)."""
    own = _stat(root)
    total = own[1] if own else 0.0
    seen, todo = {root}, _children(root)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        times = _stat(pid)
        if times:
            total += sum(times)
        todo += _children(pid)
    return total


def _portable_cpu(pid: int) -> float | None:
    try:
        import psutil

        times = psutil.Process(pid).cpu_times()
    except Exception:  # noqa: BLE001 - psutil missing, or the process gone
        return None
    return times.user + times.system + getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)


class CallClock:
    """The clocks of one call: `worker` is the worker's pid and `zygote` its zygote's (both as
    this process sees them); without a zygote (a spawned worker) the worker's own times count."""

    def __init__(self, worker: int | None, zygote: int | None = None):
        self.worker, self.zygote = worker, zygote
        self.started = time.monotonic()
        self._tree_at = self.started
        self._others0 = self._others()
        self._cpu0, self._queued0 = self._worker_times()
        self._cpu, self._queued, self._others_now = self._cpu0, self._queued0, self._others0

    @classmethod
    def start(cls, worker: int | None, zygote: int | None = None) -> "CallClock":
        return cls(worker, zygote)

    def _worker_times(self) -> tuple[float, float | None]:
        if not self.worker:
            return 0.0, None
        if _PROC:
            times = _stat(self.worker)
            return (sum(times) if times else self._last_cpu()), _queued(self.worker)
        cpu = _portable_cpu(self.worker)
        return (cpu if cpu is not None else self._last_cpu()), None

    def _last_cpu(self) -> float:
        return getattr(self, "_cpu", 0.0)

    def _others(self) -> float:
        """CPU of the student's processes but the worker: the zygote's whole tree minus the worker."""
        if not (_PROC and self.zygote):
            return 0.0
        total = tree_cpu(self.zygote)
        worker = _stat(self.worker) if self.worker else None
        return total - (sum(worker) if worker else 0.0)

    def read(self) -> None:
        """Look at the clocks now (the worker every time, the whole tree every `TREE_EVERY` s)."""
        self._cpu, self._queued = self._worker_times()
        now = time.monotonic()
        if self.zygote and now - self._tree_at >= TREE_EVERY:
            self._tree_at, self._others_now = now, self._others()

    def wall(self) -> float:
        return time.monotonic() - self.started

    def cpu(self) -> float:
        """CPU seconds of the student's processes since the call started (as last read)."""
        return max(0.0, self._cpu - self._cpu0) + max(0.0, self._others_now - self._others0)

    def idle(self) -> float:
        """Seconds the worker neither ran nor waited for a CPU since the call started (as last read)."""
        queued = self._queued - self._queued0 if self._queued is not None and self._queued0 is not None else 0.0
        return max(0.0, self.wall() - max(0.0, self._cpu - self._cpu0) - max(0.0, queued))

    def charged(self) -> float:
        """What the call cost the student: CPU plus idle time."""
        self.read()
        if self.zygote:
            self._tree_at, self._others_now = time.monotonic(), self._others()
        return self.cpu() + self.idle()

    def verdict(self, limit: float) -> str | None:
        """Why the call must stop now, or None: "cpu" (ran past its limit), "idle" (waited past
        it), "overloaded" (the wall-clock backstop, while the student's own time was within it)."""
        self.read()
        if self.cpu() > limit:
            return "cpu"
        if self.idle() > limit:
            return "idle"
        if self.wall() > backstop(limit):
            return "overloaded"
        return None


__all__ = ["CallClock", "backstop", "tree_cpu", "BACKSTOP_FACTOR", "BACKSTOP_MIN"]
