"""Subjects: what a check observes. The student's submission, the reference, a mistake.

Every subject answers `observe(call, timeout)` with an `Observation` of plain data, so a
check is written once and judges a worker, an in-process module or recorded answers alike.
"""

from __future__ import annotations

import types
from pathlib import Path

from grader.model.calls import Call, Observation
from grader.sandbox import Worker, WorkerDied, WorkerTimeout, Zygote, run_request


def _error(kind: str, message: str) -> Observation:
    return Observation(ok=False, error={"type": kind, "mro": [kind], "message": message, "traceback": "",
                                        "not_implemented": False})


class WorkerSubject:
    """A submission's exercise, run in worker processes forked from the zygote."""

    def __init__(self, zygote: Zygote, folder: Path, module: str, on_progress=None):
        self.folder = str(Path(folder).resolve())
        self.module = module
        self._worker = Worker(zygote, self.folder, module)
        self.on_progress = on_progress  # (label, done, total) while a long call runs

    def observe(self, a_call: Call, timeout: float) -> Observation:
        report = None
        if self.on_progress is not None:
            on_progress = self.on_progress
            report = lambda done, total: on_progress(a_call.label, done, total)  # noqa: E731
        try:
            return Observation.from_answer(self._worker.run(a_call.request(), timeout, report))
        except WorkerTimeout:
            return _error("Timeout", f"{timeout:g} s")
        except WorkerDied as err:
            return _error("WorkerDied", str(err))

    def close(self) -> None:
        self._worker.kill()


class InProcessSubject:
    """A trusted module (the reference, a mistake's variant) run in this process."""

    def __init__(self, module: types.ModuleType, folder: str | None = None):
        self.module = module
        self.folder = folder

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        return Observation.from_answer(run_request(a_call.request(), lambda: self.module, self.folder))


