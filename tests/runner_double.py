"""An in-process runner double for the cohort tests: a batch's student code run in its judge.

`grade batch` runs each exercise of each student in a worker inside bubblewrap, from a zygote
that imports torch per judge. What the cohort logic decides (which folders are students, what
is staged or refused and why, the gradebook and its rows, resume, shards, merge, report.html)
depends only on the answers that come back, not on where the code ran. A test of that logic
takes the `in_process_runner` fixture: its batches (and `grade exNN` runs) start no sandbox, and
each exercise of each student is imported fresh in its judge (a process forked for the batch, which ends with it) by
the worker's own loader (`Submission`) and answered by the worker's own `run_request`, the
request and the answer passed through the same codecs as on the wire. Everything else is the
real batch: the command line, the judges, the checks, the references, the files written.

It runs no limit and no time-out: the cohorts it grades are the tests' own (honest, wrong and
stub files), never one whose code attacks the judge. Where the student's code runs, and what it
cannot reach, is proven by the tests that keep the real sandbox (tests/sandbox,
tests/cohort/test_isolation.py, the kill -9, Ctrl-C, busy-machine and time-limit runs of
tests/cohort, the cheater of tests/build/test_nbgrader.py). That the double grades as the real
runner does is proven where a gradebook it wrote is compared with one the real runner wrote:
tests/cohort/test_batch.py::test_shards_merge_into_the_full_gradebook (byte for byte) and
tests/cohort/test_shards.py (every shard run of the example workflows, timings aside).

    def test_resume(course, tmp_path, in_process_runner):
        run = batch_here(course, cohort(tmp_path / "c", 3), tmp_path / "out")   # no sandbox started
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.requestcodec as requestcodec
from grader.judge.subjects import worker_setup
from grader.model.calls import Call, Observation
from grader.model.paths import PACKAGE_DIR
from grader.sandbox.worker import Submission, _place_files, run_request

EXERCISE_MODULE = re.compile(r"ex\d\d_\w+")  # as grader.sandbox.worker.forget_exercise_modules names them


class NoSandbox:
    """In place of `grader.sandbox.Zygote`: made, started and closed as one, it starts nothing
    (what decides the tier, the secret and the refusals before it, `start_zygote`, runs as ever)."""

    def __init__(self, tier: str = "practice", **_settings):
        self.tier = tier

    def start(self, wait: bool = True) -> "NoSandbox":
        return self

    def ready(self) -> "NoSandbox":
        return self

    def sweep(self) -> None:
        pass

    def close(self, wait: bool = True) -> None:
        pass


class InProcessExercise:
    """In place of `WorkerSubject`, made with the same arguments: the exercise's files read as the
    judge reads them for an official worker (`worker_setup`: no link followed, sizes capped, the
    refusals said), written into a folder of its own, and its module imported here, fresh: the
    exercise modules of the student graded before are forgotten first, as a new worker's are."""

    def __init__(self, zygote, folder, module: str, on_progress=None, not_read=None, pieces=()):
        setup = worker_setup(os.path.abspath(folder), module, copy=True, not_read=not_read, pieces=pieces)
        if setup["pieces"]:
            raise NotImplementedError("the runner double grades exercises without earlier pieces (ex01-ex09)")
        self.module = module
        self._workdir = tempfile.mkdtemp(prefix="grade-double-")
        self.folder = _place_files(setup["files"], self._workdir)
        self._refused = setup["refused"]
        self._submissions: dict[str, Submission] = {}
        # the path a worker has: the submission first, no other folder of exercise files (the
        # judge's own path holds the solutions' folder), the kit's stand-ins for earlier exercises last
        self._path = [self.folder, *(p for p in sys.path if not _holds_exercises(p)), str(PACKAGE_DIR / "earlier")]

    def observe(self, a_call: Call, timeout: float) -> Observation:
        request = requestcodec.unpack(requestcodec.pack(a_call.request()))  # the worker's own copy of the inputs
        name = request.get("module") or self.module
        started = time.monotonic()
        if name in self._refused:
            answer = {"ok": False, "error": {"type": "SubmissionRefused", "mro": ["SubmissionRefused"],
                                             "message": self._refused[name], "traceback": "",
                                             "not_implemented": False}}
        else:
            if name not in self._submissions:
                self._submissions[name] = Submission(self.folder, name, self._refused)
            # the judge's own exercise modules (the references) are set aside while the student's
            # code runs, and come back after: neither side imports the other's
            printed, path = io.StringIO(), list(sys.path)
            judges = _set_aside_exercise_modules()
            sys.path[:] = self._path
            try:
                with contextlib.redirect_stdout(printed):
                    answer = run_request(request, self._submissions[name].module, self.folder, own_interrupts=True)
            finally:
                _set_aside_exercise_modules()
                sys.modules.update(judges)
                sys.path[:] = path
            answer["output"] = printed.getvalue()
        observation = Observation.from_answer(plaincodec.decode(plaincodec.encode(answer)))
        observation.seconds = time.monotonic() - started
        return observation

    def close(self) -> None:
        shutil.rmtree(self._workdir, ignore_errors=True)


def _set_aside_exercise_modules() -> dict:
    """Take the exercise modules (`ex01_windows` …) out of `sys.modules`; they are returned."""
    names = [n for n in sys.modules if n[:2] == "ex" and EXERCISE_MODULE.fullmatch(n)]
    return {name: sys.modules.pop(name) for name in names}


def _holds_exercises(folder: str) -> bool:
    return bool(folder) and os.path.isdir(folder) and any(Path(folder).glob("ex[0-9][0-9]_*.py"))


@contextlib.contextmanager
def runner_double():
    """While it is held, `grade` run in this process grades in-process (`NoSandbox`,
    `InProcessExercise`); a batch's judges are forked from this process, so they take it along.

        with runner_double():
            run = batch_here(course, folder, out)
    """
    import grader.run.session as session
    import grader.sandbox as sandbox

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox, "Zygote", NoSandbox)
        patch.setattr(session, "WorkerSubject", InProcessExercise)
        yield


@pytest.fixture
def in_process_runner():
    """The test's `grade` runs grade in-process (`runner_double`)."""
    with runner_double():
        yield
