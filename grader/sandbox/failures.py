"""What can go wrong between the judge and a worker, as the judge's exceptions.

The student's doing (a call past its limit, a worker that exited): `WorkerTimeout`,
`WorkerDied`, charged to the call. Not the student's (the zygote killed from outside, no
process to be had, a fence that cannot hold): `ZygoteGone` and its kinds, after which a run
records nothing of what was being graded.

    >>> isinstance(NoProcess(7), ZygoteGone), FenceFailed("/kit/solutions").paths
    (True, '/kit/solutions')
"""

from __future__ import annotations


class WorkerTimeout(Exception):
    """The call ran past its time limit; the worker was killed.

    `dump` is the stack faulthandler wrote when the judge asked (SIGUSR1) just before the kill.
    """

    def __init__(self, limit, dump: str = ""):
        super().__init__(limit)
        self.dump = dump


class WorkerDied(Exception):
    """The worker exited or sent something that is not plain data.

    `status` is the worker's wait status when it exited (the zygote, its parent, reports it:
    `os.WTERMSIG(status)` is 11 for a segfault), `dump` what faulthandler wrote as it died.
    """

    def __init__(self, message: str, dump: str = "", status: int | None = None):
        super().__init__(message)
        self.dump = dump
        self.status = status


class ZygoteGone(RuntimeError):
    """The zygote has ended while the run still needed it: killed from outside (kill -9, the
    kernel's OOM killer), never by the student, whose workers run as another uid and hold none
    of its socket. Its workers die with it (PR_SET_PDEATHSIG), so whatever was being graded then
    would be charged to a student for nothing: a run that sees this records none of it."""

    def __init__(self, pid: int | None = None):
        super().__init__(f"the zygote (pid {pid}) that starts the workers has ended")
        self.pid = pid


class NoProcess(ZygoteGone):
    """The zygote is alive but the system refused it a new process for 30 s (the user's or the
    machine's process limit, held by something else: a worker's own processes are capped in its
    user namespace). Not the submission's doing: like a zygote killed from outside, nothing of
    what was being graded is recorded (a batch grades that student again, then notes a crash)."""

    def __init__(self, pid: int | None = None):
        RuntimeError.__init__(self, "the system refused a new process for 30 s")
        self.pid = pid


class FenceFailed(ZygoteGone):
    """A worker said, before any code of the submission's ran, that its fence could not keep
    `paths` from it (grader.sandbox.exits.FenceBreached). Every worker of the run would say the
    same: the run stops, and nothing of what was being graded is recorded or charged."""

    def __init__(self, paths: str):
        RuntimeError.__init__(self, f"the fence could not keep {paths} from the workers")
        self.pid, self.paths = None, paths
