"""Subjects: what a check observes. The student's submission, the reference, a mistake.

Every subject answers `observe(call, timeout)` with an `Observation` of plain data, so a
check is written once and judges a worker, an in-process module or recorded answers alike.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import time
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
        """A machine-independent key: the same call gives the same key anywhere."""
        digest = hashlib.sha256()
        _canonical(digest, (self.probe, self.args, sorted(self.kwargs.items())))
        return digest.hexdigest()


@dataclass(frozen=True)
class DataFile:
    """A data file given to probes (open it like a path); keyed by content, not location."""

    name: str
    path: str
    sha256: str

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<{self.name}>"  # in labels: train_bigram(<tinyshakespeare>), not a long path

    def __str__(self) -> str:
        return self.path


def _canonical(digest, value) -> None:
    """Feed a canonical encoding of plain call arguments into `digest`."""
    import torch

    if isinstance(value, DataFile):
        digest.update(f"D{value.name}:{value.sha256};".encode())
    elif isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        digest.update(f"T{t.dtype}{tuple(t.shape)}:".encode())
        digest.update(t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, (list, tuple)):
        digest.update(f"{'L' if isinstance(value, list) else 'U'}{len(value)}[".encode())
        for item in value:
            _canonical(digest, item)
        digest.update(b"]")
    elif isinstance(value, dict):
        digest.update(f"M{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            _canonical(digest, k)
            _canonical(digest, value[k])
        digest.update(b"}")
    elif isinstance(value, float):
        digest.update(f"F{value!r};".encode())
    elif value is None or isinstance(value, (bool, int, str, bytes)):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, torch.dtype):
        digest.update(f"dtype:{value};".encode())
    else:
        digest.update(pickle.dumps(value))


@dataclass
class Observation:
    ok: bool
    value: object = None
    error: dict | None = None
    output: str = ""

    @classmethod
    def from_answer(cls, answer: dict) -> "Observation":
        """An answer from a worker; its text fields checked and cleaned, as the student controls them."""
        error = answer.get("error")
        if not answer.get("ok") and error is not None:
            if not isinstance(error, dict):
                error = {"type": "MalformedAnswer", "mro": ["MalformedAnswer"], "message": "", "traceback": ""}
            error = {
                "type": _clean(error.get("type")) or "Exception",
                "mro": [_clean(n) for n in error.get("mro", []) if isinstance(n, str)][:64] or [_clean(error.get("type"))],
                "message": _clean(error.get("message")), "traceback": _clean(error.get("traceback")),
                "not_implemented": error.get("not_implemented") is True,
            }
        return cls(ok=answer.get("ok") is True, value=answer.get("value"), error=error,
                   output=_clean(answer.get("output")))

    @property
    def error_type(self) -> str | None:
        return self.error.get("type") if self.error else None

    def raised(self, name: str) -> bool:
        return bool(self.error) and name in self.error.get("mro", [self.error.get("type")])


_CONTROL = {c: None for c in range(32) if c not in (9, 10)} | {127: None}


def _clean(text) -> str:
    """Student-made text for a terminal: no escape sequences or other control characters."""
    if not isinstance(text, str):
        return ""
    return text.translate(_CONTROL)


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


class AnswerStore:
    """Reference answers that were slow to compute (ex12's training), kept on disk.

    An answer is filed under the call's key and a fingerprint of everything it depends on
    (the solution, the probes, the mistakes, torch's version), so a changed solution or
    probe never reads a stale answer. Files are read with `wire.decode`.
    """

    def __init__(self, folder: Path, fingerprint: str, min_seconds: float = 1.0):
        self.folder = Path(folder)
        self.fingerprint = fingerprint
        self.min_seconds = min_seconds

    def _path(self, key: str) -> Path:
        return self.folder / hashlib.sha256(f"{self.fingerprint}:{key}".encode()).hexdigest()[:32]

    def get(self, key: str) -> Observation | None:
        from grader import wire

        try:
            return Observation.from_answer(wire.decode(self._path(key).read_bytes()))
        except (OSError, wire.DecodeError):
            return None

    def put(self, key: str, obs: Observation, seconds: float) -> None:
        if seconds < self.min_seconds:
            return
        from grader import wire

        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(wire.encode({"ok": obs.ok, "value": obs.value, "error": obs.error, "output": obs.output}))
            tmp.replace(path)
        except OSError:
            pass  # no cache: slower, not wrong


def fingerprint_files(*paths: Path, extra: str = "") -> str:
    digest = hashlib.sha256(extra.encode())
    for path in paths:
        digest.update(str(path.name).encode())
        digest.update(path.read_bytes() if path.is_file() else b"-")
    return digest.hexdigest()


class Reference:
    """The reference solution of one exercise, with its known mistakes, answers cached."""

    def __init__(self, exercise_id: str, module: types.ModuleType, mistakes: list[Mistake] | None = None,
                 store: AnswerStore | None = None):
        self.exercise_id = exercise_id
        self._subject = InProcessSubject(module)
        self._module = module
        self._mistakes = mistakes_for(exercise_id) if mistakes is None else mistakes
        self._cache: dict[str, Observation] = {}
        self._mistake_cache: dict[tuple[str, str], Observation] = {}
        self._store = store

    def _compute(self, key: str, subject: InProcessSubject, a_call: Call) -> Observation:
        if self._store is not None:
            stored = self._store.get(key)
            if stored is not None:
                return stored
        start = time.monotonic()
        obs = subject.observe(a_call)
        if self._store is not None:
            self._store.put(key, obs, time.monotonic() - start)
        return obs

    @property
    def mistakes(self) -> list[Mistake]:
        return self._mistakes

    @property
    def module(self) -> types.ModuleType:
        return self._module

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        key = a_call.key()
        if key not in self._cache:
            self._cache[key] = self._compute(key, self._subject, a_call)
        return self._cache[key]

    def observe_mistake(self, mistake: Mistake, a_call: Call) -> Observation:
        key = (mistake.id, a_call.key())
        if key not in self._mistake_cache:
            variant = InProcessSubject(mistake.variant(self._module))
            self._mistake_cache[key] = self._compute(f"{mistake.id}:{key[1]}", variant, a_call)
        return self._mistake_cache[key]
