"""The reference side of a check: the solutions' answers, computed live in the judge and
kept on disk when slow (ex12's training), with the exercise's known mistakes beside them."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import time
import types
from pathlib import Path

from grader.judge.mistakes import Mistake, mistakes_for
from grader.judge.subjects import InProcessSubject
from grader.model.calls import Call, Observation
from grader.model.course import Course
from grader.model.files import atomic_write
from grader.model.fingerprint import answers_fingerprint

# the longest one process waits for another computing the same exercise's answers (ex12's
# training takes seconds; a process stopped while it held the lock does not stop the others)
LOCK_WAIT = 120.0
# An answer that took this long is kept on disk, the next run reads it (ex06's on the corpus):
# far above what reading it back costs. Only those past `AnswerStore.min_seconds` are slow ones.
KEEP_SECONDS = 0.05


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
    """Reference answers that took time to compute, kept on disk: those past `keep_seconds`
    (ex06's on the corpus), among them the slow ones, past `min_seconds` (ex12's training),
    whose known mistakes' answers a batch computes ahead (`grader.cohort.warmup`).

    An answer is filed under the call's key and a fingerprint of everything it depends on
    (the solution, the probes, the mistakes, torch's version), so a changed solution or
    probe never reads a stale answer. Files are read with `wire.decode`.
    """

    def __init__(self, folder: Path, fingerprint: str, min_seconds: float = 1.0,
                 keep_seconds: float = KEEP_SECONDS):
        self.folder = Path(folder)
        self.fingerprint = fingerprint
        self.min_seconds = min_seconds
        self.keep_seconds = min(keep_seconds, min_seconds)
        self._unlocked = False  # no lock could be had once: none is waited for again
        self._locks: dict = {}  # (process, exercise) -> its lock, one object so that a nested hold counts

    def is_warm(self, exercise_id: str) -> bool:
        """Whether an exercise's slow answers were all computed ahead (grader.cohort.warmup)."""
        return self._path(f"warm:{exercise_id}").is_file()

    def mark_warm(self, exercise_id: str) -> None:
        try:
            self._write(self._path(f"warm:{exercise_id}"), b"")
        except OSError:
            pass  # computed again next time: slower, not wrong

    def _write(self, path: Path, data: bytes) -> None:
        # The folder is its owner's alone from the start (0700): as root without mounts the
        # workers' uids are kept out of it by its mode (grader.sandbox.mountless), and one made
        # mid-run is not closed by the run's start.
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, data)

    def _path(self, key: str) -> Path:
        return self.folder / hashlib.sha256(f"{self.fingerprint}:{key}".encode()).hexdigest()[:32]

    @contextlib.contextmanager
    def computing(self, name: str):
        """Held while this process computes answers of `name` (an exercise) that are not on disk
        yet: a second process that needs one of them waits, then reads what the first kept,
        rather than compute it again (two judges of a batch, two students' `grade ex12`). The
        lock is the operating system's (`fcntl`, `msvcrt`): one a process held ends with it.
        Held again by this store (a computation nested in another of the exercise), it is taken at once.
        Where there is none, where the folder cannot be written, or once a wait has lasted
        `LOCK_WAIT` (a process stopped while it held it), this process computes without one:
        slower, not wrong.

            >>> with store.computing("ex12"):
            ...     answer = store.get(key) or compute_and_put(key)
        """
        lock_class = None if self._unlocked else _os_file_lock()
        if lock_class is None:
            yield
            return
        from filelock import Timeout

        mine = (os.getpid(), name)  # a forked process (the warm-up's) makes its own: filelock refuses an inherited one
        if mine not in self._locks:
            self._locks[mine] = lock_class(str(self._path(f"lock:{name}")) + ".lock", timeout=LOCK_WAIT)
        lock = self._locks[mine]
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock.acquire()
        except (OSError, Timeout):
            self._unlocked = True
            yield
            return
        try:
            yield
        finally:
            lock.release()

    def get(self, key: str) -> Observation | None:
        kept = self.read(key)
        return None if kept is None else kept[0]

    def read(self, key: str) -> tuple[Observation, bool] | None:
        """The answer kept under `key` and whether it is a slow one; None if none is."""
        import grader.sandbox.wire as wire

        try:
            answer = wire.decode(self._path(key).read_bytes())
            return Observation.from_answer(answer), answer.get("slow", True) is not False
        except (OSError, wire.DecodeError, AttributeError):
            return None

    def put(self, key: str, obs: Observation, slow: bool = True) -> None:
        """Keep `obs` under `key`, a slow answer or not (which answers are worth keeping and which
        are slow, `Reference` decides)."""
        import grader.sandbox.wire as wire

        try:
            self._write(self._path(key), wire.encode({"ok": obs.ok, "value": obs.value, "error": obs.error,
                                                      "output": obs.output, "slow": slow}))
        except OSError:
            pass  # no cache: slower, not wrong


def _os_file_lock():
    """filelock's lock class for this system's own file locks, or None where there are none (its
    fallback, a lock file's mere existence, would outlive a process killed while it held it)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        try:
            import msvcrt  # noqa: F401
        except ImportError:
            return None
        from filelock import WindowsFileLock

        return WindowsFileLock
    from filelock import UnixFileLock

    return UnixFileLock


class Reference:
    """The reference solution of one exercise, with its known mistakes, answers cached."""

    def __init__(self, exercise_id: str, module: types.ModuleType, mistakes: list[Mistake] | None = None,
                 store: AnswerStore | None = None):
        self.exercise_id = exercise_id
        # the reference's own folder: an error whose traceback holds no frame of it was raised
        # by the check's probe before the reference ran (grader.judge.verdicts.authors_error)
        folder = os.path.dirname(getattr(module, "__file__", "") or "") or None
        self._subject = InProcessSubject(module, folder)
        self._module = module
        self._mistakes = mistakes_for(exercise_id) if mistakes is None else mistakes
        self._cache: dict[str, Observation] = {}
        self._mistake_cache: dict[tuple[str, str], Observation] = {}
        self._store = store
        self.slow_calls: list[Call] = []  # the calls whose answers were slow (AnswerStore.min_seconds)

    def _compute(self, key: str, subject: InProcessSubject, a_call: Call) -> tuple[Observation, bool]:
        """The observation, and whether it is a slow one (computed here, or read from disk)."""
        if self._store is None:
            return self._computed(key, subject, a_call)
        stored = self._store.read(key)
        if stored is not None:
            return stored
        with self._store.computing(self.exercise_id):
            stored = self._store.read(key)  # kept by another process while this one waited
            if stored is not None:
                return stored
            return self._computed(key, subject, a_call)

    def _computed(self, key: str, subject: InProcessSubject, a_call: Call) -> tuple[Observation, bool]:
        start = time.monotonic()
        obs = subject.observe(a_call)
        seconds = time.monotonic() - start
        if self._store is None:
            return obs, False
        slow = seconds >= self._store.min_seconds
        # after a slow answer, the calls that read the same run (ex12's table after the training
        # whose history came first) are quick here only because that run is kept in this
        # process: on disk too, as slow ones, or the next process trains again
        slow_run = slow or bool(self.slow_calls)
        if slow_run or seconds >= self._store.keep_seconds:
            self._store.put(key, obs, slow=slow_run)
        return obs, slow

    @property
    def mistakes(self) -> list[Mistake]:
        return self._mistakes

    @property
    def module(self) -> types.ModuleType:
        return self._module

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        key = a_call.key()
        if key not in self._cache:
            self._cache[key], slow = self._compute(key, self._subject, a_call)
            if slow:
                self.slow_calls.append(a_call)
        return self._cache[key]

    def observe_mistake(self, mistake: Mistake, a_call: Call) -> Observation:
        key = (mistake.id, a_call.key())
        if key not in self._mistake_cache:
            variant = InProcessSubject(mistake.variant(self._module))
            self._mistake_cache[key], _ = self._compute(f"{mistake.id}:{key[1]}", variant, a_call)
        return self._mistake_cache[key]


class LiveReferences:
    """Reference answers computed from the solutions folder, in this (the judge's) process.

    Slow answers are also kept in `cache_dir` (default: the user's cache folder), so the
    second `grade ex12` does not train the reference again.
    """

    def __init__(self, course: Course, cache_dir: Path | None = None, use_disk: bool = True,
                 fingerprint: str | None = None, slow_seconds: float = 1.0):
        self.course = course
        self.cache_dir = cache_dir
        self.use_disk = use_disk
        self.slow_seconds = slow_seconds  # an answer that took this long is a slow one (AnswerStore)
        self._refs: dict[str, Reference] = {}
        # `answers_fingerprint(course)`, given by a caller that has it (`grade batch`: once for
        # every judge) or computed on first use: it digests the whole grader package, the same
        # for every exercise.
        self._fingerprint = fingerprint

    def store(self) -> AnswerStore | None:
        """Where slow answers are kept (None: not on disk)."""
        if not self.use_disk:
            return None
        from grader.data.datasets import default_cache_dir

        if self._fingerprint is None:
            self._fingerprint = answers_fingerprint(self.course)
        return AnswerStore((self.cache_dir or default_cache_dir()) / "answers", self._fingerprint, self.slow_seconds)

    def __call__(self, exercise_id: str) -> Reference:
        if exercise_id not in self._refs:
            ex = self.course.exercise(exercise_id)
            module = load_module_from(self.course.solutions_dir, ex.module)
            self._refs[exercise_id] = Reference(exercise_id, module, store=self.store())
        return self._refs[exercise_id]
