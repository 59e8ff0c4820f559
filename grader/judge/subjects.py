"""Subjects: what a check observes. The student's submission, the reference, a mistake.

Every subject answers `observe(call, timeout)` with an `Observation` of plain data, so a
check is written once and judges a worker, an in-process module or recorded answers alike.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

from grader.model.calls import Call, Observation
from grader.sandbox import PRACTICE, Overloaded, Worker, WorkerDied, WorkerTimeout, ZygoteGone, run_request


def _error(kind: str, message: str, **more) -> Observation:
    return Observation(ok=False, error={"type": kind, "mro": [kind], "message": message, "traceback": "",
                                        "not_implemented": False, **more})


def _exit_of(status: int | None) -> dict:
    """A worker's wait status as plain data: `{"signal": "SIGSEGV"}` or `{"exit_code": 3}`."""
    import signal

    if status is None:
        return {}
    if os.WIFSIGNALED(status):
        try:
            return {"signal": signal.Signals(os.WTERMSIG(status)).name}
        except ValueError:
            return {"signal": f"signal {os.WTERMSIG(status)}"}
    return {"exit_code": os.WEXITSTATUS(status)} if os.WIFEXITED(status) else {}


def worker_setup(folder: str, module: str, *, copy: bool, not_read: dict | None = None, pieces=()) -> dict:
    """What a worker is told: the exercise, the submission (where it is, or a copy of its files
    read by `grader.sandbox.intake`'s rules when the worker cannot see the folder), the files not
    read and why (by module), and the earlier pieces the exercise builds on.

        worker_setup("/cohort/ana", "ex11_estimate_loss", copy=True)
        # {"module": ..., "files": {"ex11_estimate_loss.py": b"..."}, "refused": {}, "pieces": {...}}
    """
    from grader.pieces import sources_for

    setup: dict = {"module": module, "pieces": sources_for(tuple(pieces)), "refused": dict(not_read or {})}
    if not copy:
        setup["submission"] = folder
        return setup
    from grader.sandbox.intake import read_into_refusals

    files, refusals = read_into_refusals(folder)
    setup["files"] = files
    setup["refused"].update({name.removesuffix(".py"): why for name, why in refusals.files.items()})
    if refusals.whole:
        setup["refused"][module] = refusals.whole
    return setup


class WorkerSubject:
    """A submission's exercise, run in a worker process forked from the zygote.

    In the official tiers the worker cannot see the submission's folder: it gets a copy of its
    files, read here (no link followed, sizes capped). A call's answer comes with what it cost
    the student (`Observation.seconds`: CPU and idle time, never the machine's waiting)."""

    def __init__(self, zygote, folder: Path, module: str, on_progress=None, not_read=None, pieces=()):
        # As given, never resolved: a folder that is (or sits behind) a link is refused by the
        # intake, not followed to wherever it points (grader.sandbox.intake).
        self.folder = os.path.abspath(folder)
        self.module = module
        # module -> why its file was not read ("zh / en"): said when the exercise's `import` of it fails
        self.not_read = dict(not_read or {})
        copy = getattr(zygote, "tier", PRACTICE) != PRACTICE
        self._worker = Worker(zygote, worker_setup(self.folder, module, copy=copy, not_read=self.not_read,
                                                   pieces=pieces))
        self.on_progress = on_progress  # (label, done, total) while a long call runs

    def observe(self, a_call: Call, timeout: float) -> Observation:
        """The call's answer as an Observation; `Overloaded` and `ZygoteGone` (the grader's
        problems, never the student's) go up to the run."""
        from grader.sandbox.tracebacks import where_from_dump

        report = None
        if self.on_progress is not None:
            on_progress = self.on_progress
            report = lambda done, total: on_progress(a_call.label, done, total)  # noqa: E731
        try:
            answer, seconds = self._worker.run(a_call.request(), timeout, report)
            observation = Observation.from_answer(answer)
            observation.seconds = seconds
            return observation
        except WorkerTimeout as err:
            from grader.model.calls import Printed, _clean
            from grader.sandbox.capture import printed_so_far

            _, where = where_from_dump(err.dump, self.folder)
            more = {"traceback": where, "timeout_kind": err.kind}
            if err.args and err.args[0] == "import":  # the file itself never finished importing
                more["import_error"] = True
            observation = _error("Timeout", f"{timeout:g} s", **more)
            printed = printed_so_far(err.dump)  # the worker's own count: shown, never judged
            if printed is not None:
                observation.output = Printed.of(_clean(printed[0]), printed[1])
            observation.seconds = timeout
            return observation
        except WorkerDied as err:
            fatal, where = where_from_dump(err.dump, self.folder)
            return _error("WorkerDied", str(err), traceback=where, fatal=fatal, **_exit_of(err.status))
        except (Overloaded, ZygoteGone):
            raise

    def close(self) -> None:
        self._worker.close()


class InProcessSubject:
    """A trusted module (the reference, a mistake's variant) run in this process."""

    def __init__(self, module: types.ModuleType, folder: str | None = None):
        self.module = module
        self.folder = folder

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        return Observation.from_answer(run_request(a_call.request(), lambda: self.module, self.folder))


