"""Subjects: what a check observes. The student's submission, the reference, a mistake.

Every subject answers `observe(call, timeout)` with an `Observation` of plain data, so a
check is written once and judges a worker, an in-process module or recorded answers alike.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

from grader.model.calls import Call, Observation, _clean
from grader.sandbox import FenceFailed, NoProcess, Worker, WorkerDied, WorkerTimeout, Zygote, ZygoteGone, run_request


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



def _with_why(obs: Observation, not_read: dict) -> Observation:
    """An import of a refused file, failed: the judge's reason for not reading the file added
    (display only: the module's name, from the student's process, only picks which of the
    judge's own reasons is shown).

        _with_why(<ModuleNotFoundError: No module named 'helper'>, {"helper": "未读取… / not read…"})
        # its error gains "not_read": "未读取… / not read…"
    """
    error = obs.error
    if not not_read or not error or not error.get("import_error") or error.get("not_read") \
            or error.get("type") != "ModuleNotFoundError":
        return obs
    module = error.get("message", "").removeprefix("No module named ").strip("'")
    if module in not_read:
        obs.error = {**error, "not_read": not_read[module]}
    return obs


class WorkerSubject:
    """A submission's exercise, run in worker processes forked from the zygote."""

    def __init__(self, zygote: Zygote, folder: Path, module: str, on_progress=None, not_read=None):
        # As given, never resolved: a folder that is (or sits behind) a link is refused by the
        # worker's intake, not followed to wherever it points (grader.sandbox.intake).
        self.folder = os.path.abspath(folder)
        self.module = module
        # module -> why its file was refused before this folder was made (`grade batch` stages a
        # copy without it), "zh / en": said when the exercise's `import` of it fails.
        self.not_read = dict(not_read or {})
        self.tampered: list[str] = []  # what the worker's guard saw changed (grader.sandbox.guard)
        self._worker = Worker(zygote, self.folder, module)
        self.on_progress = on_progress  # (label, done, total) while a long call runs
        self.refused: NoProcess | FenceFailed | None = None  # no worker to be had: not asked again

    def observe(self, a_call: Call, timeout: float) -> Observation:
        from grader.sandbox.tracebacks import where_from_dump

        if self.refused is not None:  # each check would wait 30 s more for the same answer
            raise self.refused
        report = None
        if self.on_progress is not None:
            on_progress = self.on_progress
            report = lambda done, total: on_progress(a_call.label, done, total)  # noqa: E731
        try:
            answer = self._worker.run(a_call.request(), timeout, report)
            self._note_tampering(answer)
            return _with_why(Observation.from_answer(answer), self.not_read)
        except (NoProcess, FenceFailed) as err:  # the session raises it after the checks (GradingSession.check_zygote)
            self.refused = err
            raise
        except WorkerTimeout as err:
            _, where = where_from_dump(err.dump, self.folder)
            if err.args and err.args[0] == "import":  # the file itself never finished importing
                return _error("Timeout", f"{timeout:g} s", traceback=where, import_error=True)
            return _error("Timeout", f"{timeout:g} s", traceback=where)
        except WorkerDied as err:
            zygote = self._worker.zygote
            if not zygote.alive():  # killed with the zygote, from outside: not the student's doing
                raise ZygoteGone(zygote.pid) from None
            fatal, where = where_from_dump(err.dump, self.folder)
            return _error("WorkerDied", str(err), traceback=where, fatal=fatal, **_exit_of(err.status))

    def _note_tampering(self, answer: dict) -> None:
        found = answer.get("tampered")
        if isinstance(found, list):
            for item in found[:20]:
                text = _clean(item)[:200] if isinstance(item, str) else "?"
                if text and text not in self.tampered:
                    self.tampered.append(text)

    def close(self) -> None:
        self._worker.kill()


class InProcessSubject:
    """A trusted module (the reference, a mistake's variant) run in this process."""

    def __init__(self, module: types.ModuleType, folder: str | None = None):
        self.module = module
        self.folder = folder

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        return Observation.from_answer(run_request(a_call.request(), lambda: self.module, self.folder))


