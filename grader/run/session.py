"""Grade exercises: one pytest session over the selected exercises' check modules.

A `GradingSession` says what is graded (exercises, submission, which checks) and supplies
the subjects; `run_checks` runs pytest with the grading plugin and gathers the results.
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Callable

import pytest

from grader.model.course import Course
from grader.judge.references import LiveReferences, Reference
from grader.judge.source import SubmissionSource
from grader.judge.subjects import InProcessSubject, WorkerSubject
from grader.run.budgets import SubmissionClock
from grader.model.results import CheckFailed, ExerciseResult, Finding
from grader.run.plugin import GradingPlugin, QuickFailureReports


class GradingSession:
    """What one grading run needs: the course, the submission, the subjects, the options."""

    def __init__(self, course: Course, exercise_ids: list[str], *, submission: Path | None = None,
                 zygote=None, references: Callable[[str], Reference] | None = None,
                 lang: str = "zh", public_only: bool = False, corpus: Callable[[], str] | None = None,
                 on_progress: Callable | None = None, in_process: dict | None = None,
                 only_checks: set[str] | None = None, not_read: dict[str, str] | None = None):
        self.course = course
        self.exercise_ids = list(exercise_ids)
        self.submission = Path(submission) if submission else None
        self.zygote = zygote
        self.references = references or LiveReferences(course)
        self.lang = lang
        self.public_only = public_only
        self._corpus = corpus
        self._on_progress = on_progress
        self.in_process = in_process or {}  # exercise id -> module or subject, for trusted variants
        self.only_checks = only_checks
        self.not_read = not_read  # module -> why its file was not read ("zh / en"; grade batch's refusals)
        self._subjects: dict[str, object] = {}
        self._sources: dict[str, object] = {}
        self._files: dict[str, bytes] | None = None  # the submission folder's files, read once in the judge
        self.clocks = SubmissionClock(course)  # per check, per exercise, per submission (run/budgets)
        self.fault: Exception | None = None  # the grader's own problem met by a check (Overloaded, ZygoteGone)

    def wants(self, exercise_id: str, check_name: str, public: bool) -> bool:
        if exercise_id not in self.exercise_ids:
            return False
        if self.public_only and not public:
            return False
        return self.only_checks is None or check_name in self.only_checks

    def timeout_of(self, exercise_id: str) -> float:
        return self.course.exercise(exercise_id).timeout

    def student(self, exercise_id: str):
        if exercise_id in self.in_process:
            given = self.in_process[exercise_id]  # a module, or a trusted subject (the reference itself)
            return _Untimed(given if hasattr(given, "observe") else InProcessSubject(given))
        if exercise_id not in self._subjects:
            # The exercises before it are done (checks run exercise by exercise): their workers
            # end now, and in the official tiers every process their code started with them:
            # nothing of one exercise runs beside the next.
            for done in list(self._subjects):
                self._close_subject(done)
            ex = self.course.exercise(exercise_id)
            self._subjects[exercise_id] = WorkerSubject(
                self.zygote, self.submission, ex.module,
                on_progress=(lambda label, done, total: self.progress("call", label, (done, total)))
                if self._on_progress else None, not_read=self.not_read, pieces=ex.pieces)
        return self.clocks.check(exercise_id, self._subjects[exercise_id])

    def missing_file(self, exercise_id: str) -> str | None:
        """The exercise file's name when nothing at all is at its place in the submission
        folder (every check then fails as missing, with no worker started and no reference
        answer computed for it); None when something is there to grade (what it is, the worker
        finds out)."""
        if exercise_id in self.in_process or self.submission is None:
            return None
        name = f"{self.course.exercise(exercise_id).module}.py"  # where the worker looks (grader.sandbox.worker)
        return None if os.path.lexists(self.submission / name) else name

    def submission_files(self) -> dict[str, bytes]:
        """The submission folder's `*.py` files as the judge reads them (grader.sandbox.intake,
        no link followed), once per session; {} for a folder refused whole."""
        if self._files is None:
            from grader.sandbox.intake import SubmissionRefused, read_submission

            try:
                self._files = read_submission(str(self.submission))[0] if self.submission is not None else {}
            except SubmissionRefused:
                self._files = {}
        return self._files

    def source(self, exercise_id: str) -> SubmissionSource:
        """The judge's reading of the exercise's source (grader.judge.source): the submission
        folder's files, or the file of a module graded in this process."""
        if exercise_id not in self._sources:
            if exercise_id in self.in_process:
                given = self.in_process[exercise_id]
                module = given if isinstance(given, types.ModuleType) else getattr(given, "module", None)
                self._sources[exercise_id] = SubmissionSource.of_module(module)
            else:
                self._sources[exercise_id] = SubmissionSource.from_files(
                    self.submission_files(), self.course.exercise(exercise_id).module)
        return self._sources[exercise_id]

    def reference(self, exercise_id: str) -> Reference:
        return self.references(exercise_id)

    def corpus_path(self) -> str:
        if self._corpus is None:
            raise CheckFailed(Finding("data", "corpus", zh="没有可用的 tiny Shakespeare 数据", en="tiny Shakespeare is not available"))
        return self._corpus()

    def progress(self, event: str, item, result=None) -> None:
        if self._on_progress:
            self._on_progress(event, item, result)

    def check_fault(self) -> None:
        """Raise the grader's own problem a check met (the machine too busy to grade fairly, a
        zygote that could not be restarted): the results so far are not the student's to carry."""
        if self.fault is not None:
            raise self.fault

    def close(self) -> None:
        for exercise_id in list(self._subjects):
            self._close_subject(exercise_id)

    def _close_subject(self, exercise_id: str) -> None:
        self._subjects.pop(exercise_id).close()

    def exercise_results(self, by_exercise: dict) -> list[ExerciseResult]:
        """The results in course order, with the scan's review marks attached (grader.judge.integrity)."""
        from grader.judge.integrity import apply_integrity
        from grader.judge.scan import scan_files

        results = [ExerciseResult(self.course.exercise(e), by_exercise.get(e, [])) for e in self.exercise_ids]
        reviews = {}
        if self.submission is not None:
            graded = {e: self.course.exercise(e).module for e in self.exercise_ids if e not in self.in_process}
            reviews = scan_files(self.submission_files(), graded)
        return apply_integrity(results, {}, reviews)


class _Untimed:
    """An in-process subject answers the worker's interface (the time limit is ignored)."""

    def __init__(self, subject):
        self.subject = subject

    def observe(self, a_call, timeout=None):
        return self.subject.observe(a_call)

    def close(self):
        pass


# pytest plugins the grader never needs; leaving them out makes each check cheaper.
# unraisableexception's clean-up is a full gc.collect() per run: a second or more in a judge
# that grades many in-process runs (grade check's mistakes) over a large heap.
LEAN_PLUGINS = [arg for name in ("logging", "capture", "faulthandler", "junitxml", "doctest", "pastebin",
                                 "unittest", "setuponly", "setupplan", "debugging", "legacypath",
                                 "unraisableexception", "threadexception")
                for arg in ("-p", f"no:{name}")]


def pytest_args(course: Course, exercise_ids: list[str]) -> list[str]:
    """pytest's arguments for the checks of `exercise_ids`: nothing is read from above the
    course's units folder. `--confcutdir` stops there (`-c /dev/null` alone would put it at
    /dev): no folder above is a collection step, so no `conftest.py` above (anyone's
    /tmp/conftest.py) runs in the grader's own process and no entry above is listed."""
    files = [str(course.unit(e) / "checks.py") for e in exercise_ids]
    return files + LEAN_PLUGINS + [
        "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:stepwise", "-p", "no:warnings",
        "--assert=plain", "--import-mode=importlib", "-c", os.devnull,
        "--rootdir", str(course.units_dir), "--confcutdir", str(course.units_dir),
        "-o", "addopts=", "-o", "python_functions=test_*",
    ]


def run_checks(session: GradingSession) -> list[ExerciseResult]:
    """Run the session's checks with pytest; results in course order."""
    plugin = GradingPlugin(session)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugin: fast and predictable
    try:
        code = pytest.main(pytest_args(session.course, session.exercise_ids), plugins=[plugin, QuickFailureReports()])
    finally:
        session.close()
    session.check_fault()
    if plugin.ctrl_c:  # the checks done so far are no result (3/4 of a 3/10); grade watch's own stop is not one
        raise KeyboardInterrupt
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        raise RuntimeError(f"pytest could not run the checks (exit {int(code)})")
    if plugin.collection_errors:
        raise RuntimeError("checks could not be collected:\n" + "\n".join(plugin.collection_errors))
    return session.exercise_results(plugin.results)
