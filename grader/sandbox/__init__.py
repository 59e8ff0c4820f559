"""The untrusted side: where a submission's code runs, and the only seam the judge uses.

`Zygote(tier, …)` starts workers in the run's isolation tier (`grader.sandbox.isolation`:
practice, bubblewrap or container); `Worker(zygote, setup)` is the judge's handle on the
process that runs one exercise of one submission, and answers a request ("run probe P with
these arguments") with plain data that `plaincodec.decode` reads back without running
anything the student wrote, and with what the call cost the student (`grader.sandbox.clock`).
`run_request` answers the same request for a trusted module in-process.

Two ways to start workers, one interface (`worker_mode()` chooses):

- fork (Linux): `Zygote` forks each worker from a process that imported torch once;
- spawn (Windows, macOS, or `GRADE_WORKER=spawn`; the practice tier only): `SpawnZygote`
  starts fresh interpreters ahead of need (`grader.sandbox.pool`, `grader.sandbox.spawn`).
"""

from grader.sandbox.exits import CHANNEL_LOST
from grader.sandbox.failures import NoProcess, Overloaded, WorkerDied, WorkerTimeout, ZygoteGone
from grader.sandbox.isolation import BUBBLEWRAP, CONTAINER, PRACTICE, IsolationUnavailable, choose, is_official
from grader.sandbox.pool import SpawnZygote, worker_mode
from grader.sandbox.worker import run_request
from grader.sandbox.zygote import Worker
from grader.sandbox.zygote import Zygote as ForkZygote


def Zygote(tier: str = PRACTICE, **options) -> ForkZygote:  # noqa: N802 - stands for the class
    """The zygote for this run: a `ForkZygote` (every official tier, and practice where fork is
    safe), or a `SpawnZygote` where fork is missing or unsafe or `GRADE_WORKER=spawn` asks for it.

        zygote = Zygote("bubblewrap", uid=64900, unseen=[...], data=[...]).start()
    """
    if tier == PRACTICE and worker_mode() == "spawn":
        return SpawnZygote(**options)
    return ForkZygote(tier, **options)


__all__ = ["Zygote", "ForkZygote", "SpawnZygote", "worker_mode", "Worker", "WorkerDied", "WorkerTimeout",
           "Overloaded", "ZygoteGone", "NoProcess", "run_request", "CHANNEL_LOST", "PRACTICE", "BUBBLEWRAP",
           "CONTAINER", "IsolationUnavailable", "choose", "is_official"]
