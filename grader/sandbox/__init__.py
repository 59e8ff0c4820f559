"""The untrusted side: where a submission's code runs, and the only seam the judge uses.

`Zygote(fence)` gives what starts fenced workers on this machine, and `Worker(zygote, …)`
the judge's handle on one; a worker answers a request ("run probe P with these
arguments") with plain data that `wire.decode` reads back without running anything the
student wrote. `run_request` answers the same request for a trusted module in-process.
Nothing else of this package is for the judge: the fence, the framing and the worker's
loop are the worker's own business.

Two ways to start a worker, one interface (`worker_mode()` chooses):

- fork (Linux): `ForkZygote` forks each worker from a process that imported torch once;
- spawn (Windows, macOS, or `GRADE_WORKER=spawn`): `SpawnZygote` starts fresh
  interpreters ahead of need (`grader.sandbox.pool`, `grader.sandbox.spawn`).
"""

from grader.sandbox.exits import CHANNEL_LOST
from grader.sandbox.failures import FenceFailed, NoProcess, WorkerDied, WorkerTimeout, ZygoteGone
from grader.sandbox.pool import SpawnZygote, worker_mode
from grader.sandbox.worker import run_request
from grader.sandbox.zygote import Worker
from grader.sandbox.zygote import Zygote as ForkZygote


def Zygote(fence: dict | None = None, huge_pages: bool = False) -> ForkZygote:  # noqa: N802 - stands for the class
    """The zygote for this machine: a `ForkZygote`, or a `SpawnZygote` (a subclass) where fork is
    missing or unsafe or `GRADE_WORKER=spawn` asks for it. Call `.start()` before loading secrets:

        zygote = Zygote(fence={"hide": [...], "grants": [...]}).start()

    `huge_pages` (forked zygotes only): cheaper forks for a run that starts many workers.
    """
    return SpawnZygote(fence) if worker_mode() == "spawn" else ForkZygote(fence, huge_pages=huge_pages)


__all__ = ["Zygote", "ForkZygote", "SpawnZygote", "worker_mode", "Worker", "WorkerDied", "WorkerTimeout",
           "ZygoteGone", "NoProcess", "FenceFailed", "run_request", "CHANNEL_LOST"]
