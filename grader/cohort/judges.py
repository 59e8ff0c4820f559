"""The judge processes of a batch, and the driver that hands them students.

Each judge is forked from the batch after torch and pytest are loaded and runs ONE pytest
session for all the students it is given: the checks are collected once, then run again for
every student; the references (and their cached answers) stay in its memory. Student code
runs only in workers forked from its slot's zygote, inside the run's isolation, one worker
per exercise per student; nothing a worker starts or writes outlives it.

- An exercise whose file the submission does not hold is not run at all: its checks are
  recorded as missing at once (no worker is started), so it costs next to nothing.
- Each judge dies with the batch (`PR_SET_PDEATHSIG`, kill -9 of the batch included).
- If a judge dies, it is replaced, and the student is tried once more, then scored 0 with
  the reason.
- Whatever a worker does is its own exercise's outcome; only the grader's own problems (a
  machine too busy to grade fairly, a zygote that cannot be started again) stop the batch,
  recording nothing of the students being graded then: a rerun grades them.

    >>> drive(make_judge, students, pending=[0, 1, 2], jobs=2, progress=False)
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import sys
import time

import pytest

from grader.cohort.children import die_with_parent, fork_holding_ctrl_c, release_ctrl_c
from grader.cohort.gradebook import write_state
from grader.cohort.reasons import REASONS, reason_text
from grader.cohort.students import Student
from grader.model.course import Course
from grader.sandbox import Overloaded, ZygoteGone

FORMAT_EXT = {"json": "json", "junit": "xml", "gradescope": "gradescope.json", "github": "md", "text": "txt",
              "classroom": "classroom.json"}
GRADER_FAULT = 4  # a judge's exit code: the grader's own problem (Overloaded, ZygoteGone): the batch stops


class Judge:
    """One judge process: a pytest session that grades student after student."""

    def __init__(self, course: Course, ids: list[str], zygote, slot: int, out, lang: str,
                 formats: list[str], corpus, course_fp: str, students: list[Student], references):
        self.course, self.ids, self.zygote, self.slot = course, ids, zygote, slot
        self.out, self.lang, self.formats = out, lang, formats
        self.corpus, self.course_fp, self.students = corpus, course_fp, students
        # the batch's LiveReferences (answers computed ahead, grader.cohort.warmup), inherited by the fork
        self.references = references

    def run(self, tasks, report) -> None:
        """`tasks()` gives the next Student or None; `report(name, info)` after each one."""
        from grader.run.plugin import GradingPlugin
        from grader.run.session import pytest_args

        plugin = GradingPlugin(self._session(None, self.references))
        loop = _StudentLoop(self, plugin, self.references, tasks, report)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        code = pytest.main(pytest_args(self.course, self.ids), plugins=[plugin, loop])
        if loop.error is not None:
            raise loop.error
        if plugin.collection_errors:
            raise RuntimeError("checks could not be collected:\n" + "\n".join(plugin.collection_errors))
        if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
            raise RuntimeError(f"pytest could not run the checks (exit {int(code)})")

    def _session(self, student: Student | None, references):
        from grader.run.session import GradingSession
        from grader.run.startup import corpus_provider

        corpus = corpus_provider(self.course, resolved=self.corpus)
        # The staged copy lacks what was refused: an `import helper` of a refused helper.py says why.
        not_read = {name.removesuffix(".py"): f"{reason_text(p, 'zh')} / {reason_text(p, 'en')}"
                    for name, p in student.refused.items()} if student else None
        return GradingSession(self.course, self.ids, submission=student.folder if student else None,
                              zygote=self.zygote, references=references, lang=self.lang, corpus=corpus,
                              not_read=not_read)

    def grade(self, student: Student, plugin, references, items) -> dict:
        from grader.report.json_report import as_json_dict
        from grader.run.markers import exercise_of

        session = self._session(student, references)
        plugin.session = session
        plugin.results = {}
        plugin._views = {}
        started = time.monotonic()
        todo = [item for item in items if exercise_of(item) in student.present]
        try:
            for item in items:
                if exercise_of(item) not in student.present:
                    plugin.results.setdefault(exercise_of(item), []).append(self._missing(student, item))
            for i, item in enumerate(todo):
                nextitem = todo[i + 1] if i + 1 < len(todo) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        except pytest.exit.Exception:  # the plugin met the grader's own problem (session.fault): raised below
            if session.fault is None:
                raise
        finally:
            session.close()
        session.check_fault()  # the grader's problem: nothing of this student is recorded (drive stops the batch)
        if hasattr(session, "exercise_results"):  # the integrity verdicts applied (grader.judge.integrity)
            results = session.exercise_results(plugin.results)
        else:
            from grader.model.results import ExerciseResult

            results = [ExerciseResult(self.course.exercise(e), plugin.results.get(e, [])) for e in self.ids]
        if not all((student.folder / self.course.exercise(e).file).is_file() for e in student.present):
            # OUT/staged changed under the run (no worker can reach it): not the student's
            # result. Nothing is saved; the gradebook is refused at the end, a rerun regrades.
            return {"seconds": time.monotonic() - started, "score": None}
        result = _stable(as_json_dict(results, self.lang, instructor=True))  # the instructor's file: both views
        for fmt in self.formats:
            from grader.model.files import atomic_write
            from grader.report.render import render

            text = render(results, fmt, self.lang)
            atomic_write(self.out / "reports" / f"{student.key}.{FORMAT_EXT[fmt]}", text + "\n")
        write_state(self.out, student, self.course_fp, result)
        return {"seconds": time.monotonic() - started, "score": result["score"]}

    def _missing(self, student: Student, item):
        """A check of an exercise the submission lacks: failed as missing, nothing run."""
        from grader.model.results import CheckResult, Finding, title_from_doc
        from grader.run.markers import exercise_of, is_manual, is_public, points_of

        ex = self.course.exercise(exercise_of(item))
        problem = student.refused.get(ex.file)
        if problem is not None:  # refused (a link, a FIFO, over the cap): said as a single run says it
            kind, zh, en = "refused", reason_text(problem, "zh"), reason_text(problem, "en")
        else:
            kind, zh, en = "missing", *[f"{ex.file} 不在提交目录中 / is not in the submission folder"] * 2
        return CheckResult(exercise=ex.id, name=item.name, title=title_from_doc(item.function.__doc__, item.name),
                           max_points=points_of(item), passed=False, public=is_public(item), manual=is_manual(item),
                           finding=Finding(kind, item.name, zh=zh, en=en), shown=[], attachments={}, seconds=0.0)


class _StudentLoop:
    """A pytest plugin that replaces the run loop: every collected check, once per student."""

    def __init__(self, judge: Judge, plugin, references, tasks, report):
        self.judge, self.plugin, self.references = judge, plugin, references
        self.tasks, self.report = tasks, report
        self.error = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        from grader.run.startup import freeze_loaded

        items = list(session.items)
        freeze_loaded()  # torch, pytest and the collected checks: no collection walks them again
        try:
            while True:
                student = self.tasks()
                if student is None:
                    break
                info = self.judge.grade(student, self.plugin, self.references, items)
                self.report(student.name, info)
        except BaseException as err:  # noqa: BLE001  handed to the caller after pytest ends
            self.error = err
        return True


def _stable(value):
    """Remove what differs between two runs of the same code (object addresses in messages)."""
    import re

    if isinstance(value, str):
        return re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", value)
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()}
    return value


def _judge_process(judge: Judge, task_fd: int, result_fd: int, parent: int) -> None:
    """Body of a forked judge: read student indexes, grade, report. Never returns."""
    code = 0
    try:
        die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        release_ctrl_c()
        tasks_in = os.fdopen(task_fd, "r")
        results_out = os.fdopen(result_fd, "w", buffering=1)

        def next_task():
            line = tasks_in.readline()
            return judge.students[int(line)] if line.strip() else None

        def report(name, info):
            results_out.write(json.dumps({"done": name, **info}) + "\n")

        judge.run(next_task, report)
    except (ZygoteGone, Overloaded) as err:  # its student is not recorded; the batch stops and says why (drive)
        code = GRADER_FAULT
        from grader.run.grading import gone_text

        try:
            os.write(2, (gone_text(err, judge.lang, batch=True) + "\n").encode())
        except OSError:
            pass
    except BaseException as err:  # noqa: BLE001
        try:
            os.write(2, f"grade batch: judge {judge.slot} failed: {type(err).__name__}: {err}\n".encode())
        except OSError:
            pass
        code = 3
    finally:
        sys.stdout.flush()
        os._exit(code)


class _Slot:
    def __init__(self, slot: int, pid: int, task_w: int, result_r: int):
        self.slot, self.pid, self.task_w, self.result_r = slot, pid, task_w, result_r
        self.current = None
        self.buffer = b""


def _fork_judge(make_judge, slot: int) -> _Slot:
    task_r, task_w = os.pipe()
    result_r, result_w = os.pipe()
    judge = make_judge(slot)
    judge.zygote.sweep()  # what a judge that died there left in its slot's sandbox
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = fork_holding_ctrl_c()
    if pid == 0:
        os.close(task_w)
        os.close(result_r)
        _judge_process(judge, task_r, result_w, parent)
    os.close(task_r)
    os.close(result_w)
    return _Slot(slot, pid, task_w, result_r)


def drive(make_judge, students: list[Student], pending: list[int], jobs: int, progress) -> None:
    """Hand students to judges one at a time, show progress, replace a judge that dies.

    If a judge meets the grader's own problem (its exit `GRADER_FAULT`), no more students are
    handed out, the judges record nothing of the students they hold (`Judge.grade`), and
    ZygoteGone is raised once they have all ended: a rerun grades whoever is left."""
    queue = list(pending)
    lost = False
    tries: dict[int, int] = {}
    selector = selectors.DefaultSelector()
    slots = []
    for slot in range(jobs):
        s = _fork_judge(make_judge, slot)
        slots.append(s)
        selector.register(s.result_r, selectors.EVENT_READ, s)

    def give(s: _Slot) -> None:
        if queue:
            n = queue.pop(0)
            s.current = n
            tries[n] = tries.get(n, 0) + 1
            os.write(s.task_w, f"{n}\n".encode())
        else:
            s.current = None
            _close(s.task_w)
            s.task_w = -1

    def stop(fault: bool = False) -> bool:
        nonlocal lost
        if fault and not lost:
            lost = True
            queue.clear()
            for s in slots:  # a judge between students reads the end of its tasks and leaves
                if s.task_w >= 0 and s.current is None:
                    _close(s.task_w)
                    s.task_w = -1
        return lost

    bar = _Bar(len(pending), progress)
    try:
        for s in slots:
            give(s)
        live = len(slots)
        while live:
            for key, _ in selector.select(timeout=1.0):
                s = key.data
                chunk = os.read(s.result_r, 65536)
                if chunk:
                    s.buffer += chunk
                    while b"\n" in s.buffer:
                        line, s.buffer = s.buffer.split(b"\n", 1)
                        bar.advance(json.loads(line)["done"])
                        s.current = None
                        give(s)
                    continue
                # the judge ended: normally after its task pipe closed; else it died
                selector.unregister(s.result_r)
                os.close(s.result_r)
                try:
                    _, status = os.waitpid(s.pid, 0)
                except ChildProcessError:
                    status = 0
                live -= 1
                stop(fault=os.waitstatus_to_exitcode(status) == GRADER_FAULT)
                if lost and s.task_w >= 0:
                    _close(s.task_w)
                    s.task_w = -1
                judge = make_judge(s.slot)
                if s.current is not None and not lost:
                    n = s.current
                    if tries.get(n, 0) < 2:
                        queue.insert(0, n)
                    else:
                        write_crash(judge, students[n])
                        bar.advance(students[n].name)
                    _close(s.task_w)
                    if queue:
                        fresh = _fork_judge(make_judge, s.slot)
                        selector.register(fresh.result_r, selectors.EVENT_READ, fresh)
                        slots.append(fresh)
                        live += 1
                        give(fresh)
            bar.refresh()
        if lost:
            raise ZygoteGone(None)
    except KeyboardInterrupt:
        # Ctrl-C stops the batch now, not once each judge has finished its student (the
        # judges ignore SIGINT): they are killed, and so is what their workers left running.
        # What was saved stays saved; the students they held are graded by the next run.
        for s in slots:
            _end_judge(s)
        raise
    finally:
        bar.close()
        for s in slots:
            _close(s.task_w)


def _end_judge(s: _Slot) -> None:
    try:
        os.kill(s.pid, signal.SIGKILL)
        os.waitpid(s.pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass  # ended already, and waited for


def _close(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


def write_crash(judge: Judge, student: Student) -> None:
    """A student whose grading killed the judge twice: every exercise 0, with the reason."""
    zh, en = REASONS["crash"]
    exercises = []
    for ex_id in judge.ids:
        ex = judge.course.exercise(ex_id)
        exercises.append({"id": ex.id, "title": ex.title(judge.lang), "status": "failed", "score": 0,
                          "max_score": ex.points, "checks": [{
                              "name": "grading", "title": "grading", "passed": False, "score": 0,
                              "max_score": ex.points, "message": f"{zh} / {en}",
                              "public": True, "manual": False, "kind": "crash", "diagnosis": None}]})
    result = {"score": 0, "max_score": sum(e["max_score"] for e in exercises), "exercises": exercises}
    crashed = Student(student.name, student.key, student.folder, student.fingerprint, student.present,
                      (*student.problems, {"file": "", "reason": "crash"}), student.refused)
    write_state(judge.out, crashed, judge.course_fp, result)


class _Bar:
    """The batch's progress bar (report.live.progress_bar), one tick per student."""

    def __init__(self, total: int, enabled: bool | None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress = None
        if self.enabled and total:
            from grader.report.live import progress_bar

            self._progress = progress_bar(counts="items", transient=False)
            self._task = self._progress.add_task("grading", total=total)

    def advance(self, name: str) -> None:
        if self._progress is not None:
            from rich.markup import escape

            from grader.cohort.names import terminal_text

            shown = terminal_text(name)[:24]  # a folder's name is never a terminal's or rich's command
            self._progress.update(self._task, advance=1, description=escape(f"{shown:<24}"))

    def refresh(self) -> None:
        if self._progress is not None:
            self._progress.refresh()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
