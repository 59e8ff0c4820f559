"""The untrusted side: where a submission's code runs, and the only seam the judge uses.

`Zygote` forks fenced `Worker`s; a worker answers a request ("run probe P with these
arguments") with plain data that `wire.decode` reads back without running anything the
student wrote. `run_request` answers the same request for a trusted module in-process.
Nothing else of this package is for the judge: the fence, the framing and the worker's
loop are the worker's own business.
"""

from grader.sandbox.worker import run_request
from grader.sandbox.zygote import Worker, WorkerDied, WorkerTimeout, Zygote

__all__ = ["Zygote", "Worker", "WorkerDied", "WorkerTimeout", "run_request"]
