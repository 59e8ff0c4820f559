"""Subjects: what a check observes. The student's submission, the reference, a mistake.

Every subject answers `observe(call, timeout)` with an `Observation` of plain data, so a
check is written once and judges a worker, an in-process module or recorded answers alike.
"""

from __future__ import annotations

import hashlib
import importlib.util
import pickle
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from grader.diagnose import Mistake, mistakes_for
from grader.sandbox import Worker, WorkerDied, WorkerTimeout, Zygote
from grader.worker import run_request


@dataclass(frozen=True)
class Call:
    """One observation to make: run `probe` (grader.probes.<module>.<function>) with args."""

    probe: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict, hash=False)
    label: str = ""

    def request(self) -> dict:
        return {"probe": self.probe, "args": self.args, "kwargs": self.kwargs}

    def key(self) -> str:
        return hashlib.sha256(pickle.dumps((self.probe, self.args, sorted(self.kwargs.items())))).hexdigest()


@dataclass
class Observation:
    ok: bool
    value: object = None
    error: dict | None = None
    output: str = ""

    @classmethod
    def from_answer(cls, answer: dict) -> "Observation":
        return cls(ok=bool(answer.get("ok")), value=answer.get("value"), error=answer.get("error"),
                   output=answer.get("output", "") or "")

    @property
    def error_type(self) -> str | None:
        return self.error.get("type") if self.error else None

    def raised(self, name: str) -> bool:
        return bool(self.error) and name in self.error.get("mro", [self.error.get("type")])


def _error(kind: str, message: str) -> Observation:
    return Observation(ok=False, error={"type": kind, "mro": [kind], "message": message, "traceback": "",
                                        "not_implemented": False})


class WorkerSubject:
    """A submission's exercise, run in worker processes forked from the zygote."""

    def __init__(self, zygote: Zygote, folder: Path, module: str):
        self.folder = str(Path(folder).resolve())
        self.module = module
        self._worker = Worker(zygote, self.folder, module)

    def observe(self, a_call: Call, timeout: float) -> Observation:
        try:
            return Observation.from_answer(self._worker.run(a_call.request(), timeout))
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


def load_module_from(folder: Path, module_name: str, as_name: str | None = None) -> types.ModuleType:
    """Import `folder/module_name.py` (its folder on sys.path, for imports between exercises)."""
    folder = Path(folder).resolve()
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    path = folder / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(as_name or module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[as_name or module_name] = module
    spec.loader.exec_module(module)
    return module


class Reference:
    """The reference solution of one exercise, with its known mistakes, answers cached."""

    def __init__(self, exercise_id: str, module: types.ModuleType, mistakes: list[Mistake] | None = None):
        self.exercise_id = exercise_id
        self._subject = InProcessSubject(module)
        self._module = module
        self._mistakes = mistakes_for(exercise_id) if mistakes is None else mistakes
        self._cache: dict[str, Observation] = {}
        self._mistake_cache: dict[tuple[str, str], Observation] = {}

    @property
    def mistakes(self) -> list[Mistake]:
        return self._mistakes

    @property
    def module(self) -> types.ModuleType:
        return self._module

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        key = a_call.key()
        if key not in self._cache:
            self._cache[key] = self._subject.observe(a_call)
        return self._cache[key]

    def observe_mistake(self, mistake: Mistake, a_call: Call) -> Observation:
        key = (mistake.id, a_call.key())
        if key not in self._mistake_cache:
            self._mistake_cache[key] = InProcessSubject(mistake.variant(self._module)).observe(a_call)
        return self._mistake_cache[key]
