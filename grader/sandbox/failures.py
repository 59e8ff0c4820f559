"""What can go wrong between the judge and a worker, as the judge's exceptions.

The student's doing, charged to the call: `WorkerTimeout` (its CPU or idle time ran past the
limit), `WorkerDied` (it exited, crashed, or sent something that is not plain data). Not the
student's, never charged: `Overloaded` (the machine was too busy to give the call its time:
the wall-clock backstop fired while the student's own time was within its limit), `NoProcess`
(the system refused the zygote a new process), `ZygoteGone` (the zygote cannot be reached).

    >>> WorkerTimeout(10.0, kind="idle").kind, isinstance(NoProcess(7), ZygoteGone)
    ('idle', True)
"""

from __future__ import annotations


class WorkerTimeout(Exception):
    """The call ran past its limit; the worker was killed. `kind`: "cpu" (it kept running) or
    "idle" (it kept waiting: a sleep, a lock, input); `dump`: the stack faulthandler wrote when
    the judge asked (SIGUSR1) just before the kill."""

    def __init__(self, limit, dump: str = "", kind: str = "cpu"):
        super().__init__(limit)
        self.dump = dump
        self.kind = kind


class WorkerDied(Exception):
    """The worker exited or sent something that is not plain data.

    `status` is the worker's wait status when it exited (the zygote, its parent, reports it:
    `os.WTERMSIG(status)` is 11 for a segfault), `dump` what faulthandler wrote as it died.
    """

    def __init__(self, message: str, dump: str = "", status: int | None = None):
        super().__init__(message)
        self.dump = dump
        self.status = status


class Overloaded(RuntimeError):
    """The wall-clock backstop fired while the call's CPU and idle time were within `limit`: the
    machine gave the worker too little of a CPU to grade it fairly. The grader's problem: the run
    stops (exit 3) and says so; nothing of the submission being graded is recorded."""

    def __init__(self, limit: float, wall: float):
        super().__init__(f"the machine was too busy: a call with a {limit:g} s limit waited {wall:.0f} s for a CPU")
        self.limit, self.wall = limit, wall


class ZygoteGone(RuntimeError):
    """The zygote cannot be reached or restarted: the run stops (exit 3), nothing charged."""

    def __init__(self, pid: int | None = None):
        super().__init__(f"the zygote (pid {pid}) that starts the workers has ended")
        self.pid = pid


class NoProcess(ZygoteGone):
    """The zygote is alive but the system refused it a new process for 30 s (the machine's
    process or memory limit, held by something else): the run stops, nothing charged."""

    def __init__(self, pid: int | None = None):
        RuntimeError.__init__(self, "the system refused a new process for 30 s")
        self.pid = pid
