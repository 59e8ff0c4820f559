"""The pytest plugin that runs the checks for the grader.

It provides the fixtures checks ask for (`student`, `reference`, `source`, `corpus_path`), keeps
only the selected checks, and turns each test's outcome into a `CheckResult`. pytest runs
the checks; this plugin only listens.
"""

from __future__ import annotations

import time

import pytest

from grader.model.results import CheckFailed, Finding
from grader.judge.verdicts import AuthorsError, StudentView
from grader.judge.hiding import contract_names, hidden_view_of
from grader.judge.student_errors import missing_file_finding
from grader.model.results import CheckResult, title_from_doc
from grader.run.markers import MARKERS, exercise_of, is_manual, is_public, points_of, timeout_of
from grader.sandbox import Overloaded, ZygoteGone



class GradingPlugin:
    def __init__(self, session):
        self.session = session
        self.results: dict[str, list[CheckResult]] = {}
        self.collection_errors: list[str] = []
        self._views: dict[str, StudentView] = {}
        self._started: dict[str, float] = {}
        self._item = None  # the check being set up and run (see the fixtures)
        self.ctrl_c = False  # the run was stopped by Ctrl-C (not by `pytest.exit`, grade watch's "saved again")

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest stops a run whose checks could not be collected with Session.Interrupted, a
        # KeyboardInterrupt too: that is the kit's fault (collection_errors), not Ctrl-C
        self.ctrl_c = isinstance(excinfo.value, KeyboardInterrupt) and \
            not isinstance(excinfo.value, pytest.Session.Interrupted)

    def pytest_configure(self, config):
        for line in MARKERS:
            config.addinivalue_line("markers", line)

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")

    def pytest_collection_modifyitems(self, session, config, items):
        # A manual check (ex04's written answer) is visible wherever the public ones are.
        chosen = [i for i in items if self.session.wants(
            exercise_of(i), i.name, is_public(i) or is_manual(i))]
        order = {ex_id: n for n, ex_id in enumerate(self.session.exercise_ids)}
        chosen.sort(key=lambda i: order.get(exercise_of(i), 999))  # stable: file order within
        config.hook.pytest_deselected(items=[i for i in items if i not in chosen])
        items[:] = chosen

    # The fixtures take their check from `pytest_runtest_setup` (self._item), not from pytest's
    # `request`: asking for that builds it a fixture definition of its own, every check,
    # every student.
    @pytest.fixture
    def student(self):
        item = self._item
        exercise_id = exercise_of(item)
        timeout = timeout_of(item, self.session.timeout_of(exercise_id))
        view = StudentView(self.session.student(exercise_id), timeout, goes_on=True)
        self._views[item.nodeid] = view
        return view

    @pytest.hookimpl(wrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        """A check goes on past its first failed comparison; when its body ends, that failure
        is raised, diagnosed over every case it compared (StudentView.settle)."""
        view = self._views.get(pyfuncitem.nodeid)
        if view is None:
            return (yield)
        try:
            result = yield
        except BaseException as err:  # noqa: BLE001 - settle re-raises what it does not replace
            view.settle(err)
            raise
        view.settle()
        return result

    @pytest.fixture
    def reference(self):
        return self.session.reference(exercise_of(self._item))

    @pytest.fixture
    def source(self):
        """The judge's reading of the exercise's source (grader.judge.source), for the checks
        that judge how an answer is written (ex02's forbidden APIs)."""
        return self.session.source(exercise_of(self._item))

    @pytest.fixture
    def corpus_path(self):
        return self.session.corpus_path()

    @pytest.fixture
    def draws(self):
        """Seeds for a hidden check's random inputs (grader.judge.draws): as written without a
        course secret, drawn per submission with one."""
        from grader.judge.draws import draws_for

        return draws_for(self.session, exercise_of(self._item), self._item.name)

    @pytest.fixture
    def lang(self):
        return self.session.lang

    @pytest.hookimpl(tryfirst=True)  # before the runner's own, which sets the fixtures up
    def pytest_runtest_setup(self, item):
        self._item = item
        self._started[item.nodeid] = time.monotonic()
        self.session.progress("start", item)
        missing = None if is_manual(item) else self.session.missing_file(exercise_of(item))
        if missing:  # the check's failure, before its fixtures start a worker or a reference
            raise CheckFailed(missing_file_finding(item.name, missing))

    @pytest.hookimpl(wrapper=True)  # a grader fault stops the run from here (pytest.exit in _record)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if report.when == "call" or (report.when == "setup" and report.failed):
            self._record(item, call, report)
        return report

    def _record(self, item, call, report) -> None:
        finding = None
        if report.failed:
            err = call.excinfo.value if call.excinfo else None
            if isinstance(err, (Overloaded, ZygoteGone)):  # the grader's problem: the run stops, nothing recorded
                self.session.fault = err
                pytest.exit("grader fault", returncode=3)
            if isinstance(err, CheckFailed):
                finding = err.finding
            else:
                where = "fixture" if report.when == "setup" else "check"
                text = report.longreprtext.strip().splitlines()[-1:] if report.longreprtext else [repr(err)]
                if isinstance(err, AuthorsError):  # what the author got wrong (a probe's name, its failure)
                    text = [f"{type(err).__name__}: {err}"]
                finding = Finding("grader_error", item.name,
                                  zh=f"评分程序出错（{where}）：{text[0]}", en=f"grader error ({where}): {text[0]}",
                                  traceback=report.longreprtext[-3000:])
        view = self._views.pop(item.nodeid, None)
        if finding is not None and not is_public(item):
            course = self.session.course
            names = contract_names(course.exercises_dir / course.exercise(exercise_of(item)).file)
            finding.hidden_view = hidden_view_of(view, finding, names)  # what the student's report may show
        result = CheckResult(
            exercise=exercise_of(item), name=item.name, title=title_from_doc(item.function.__doc__, item.name),
            max_points=points_of(item), passed=report.passed, public=is_public(item),
            manual=is_manual(item), finding=finding,
            shown=list(view.shown) if view else [], attachments=dict(view.attachments) if view else {}, seconds=time.monotonic() - self._started.get(item.nodeid, time.monotonic()))
        self.results.setdefault(result.exercise, []).append(result)
        self.session.progress("done", item, result)


class QuickFailureReports:
    """A failed check's report without pytest's traceback rendering.

    A check that fails says why in its `CheckFailed` finding; pytest would still render the
    whole traceback for the report (tens of milliseconds a failure: a cohort's stubs and wrong
    answers fail hundreds of checks). Any other exception, a grader error, keeps pytest's own
    report and its traceback.
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is None or not isinstance(call.excinfo.value, CheckFailed):
            return None
        from _pytest.reports import TestReport

        return TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed",
                          str(call.excinfo.value)[:500] or "check failed", call.when,
                          duration=call.duration, start=call.start, stop=call.stop)
