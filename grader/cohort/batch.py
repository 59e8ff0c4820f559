"""`grade batch DIR --out OUTDIR`: grade a cohort; `grade merge`: join sharded gradebooks.

DIR holds one folder per student with their `exNN_*.py` files (or an `exercises/` folder
inside it), or is an nbgrader `submitted/` folder (`<student>/<assignment>/*.ipynb`), whose
solution cells are extracted into exercise files first (under OUTDIR/extracted/).

How it runs:

- One zygote is started first (it imports torch; the reference and the checks are never
  loaded in it). This process then imports torch and pytest and forks `-j` judge
  processes. Each judge runs ONE pytest session for all the students it is given: the
  checks are collected once, then run again for every student; the references (and their
  cached answers) stay in the judge's memory, so the reference is computed once per judge,
  not once per student. Student code runs only in workers forked from the zygote, each
  judge slot under its own unprivileged uid (as root), fenced by `grader.sandbox.fence`.
- Each student's result is written to OUTDIR/students/<student>.json atomically (temporary
  file, then rename) as soon as it is known. A rerun reads those files and grades only the
  students without one (or whose files, or the course, changed): after kill -9 the gradebook
  comes out identical. grades.csv and results.json are assembled from the per-student files
  at the end, again atomically.
- A student's hang, crash or memory blow-up stays in their workers (time limit per check,
  address-space limit, process group and uid killed after the student); if a judge itself
  dies, it is replaced and the student is tried once more, then scored 0 with a note.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import selectors
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from grader.model.course import Course
from grader.model.files import atomic_write as _atomic_write, digest_files
from grader.model.fingerprint import answers_fingerprint

EXERCISE_FILE = re.compile(r"^(ex\d\d)_\w*\.py$")
STATE_VERSION = 1
# pytest's own plugins the checks do not use: off, they cost time on every check of every student
FORMAT_EXT = {"json": "json", "junit": "xml", "gradescope": "gradescope.json", "github": "md", "text": "txt"}


# --------------------------------------------------------------------------- students


@dataclass(frozen=True)
class Student:
    name: str
    folder: Path  # holds the exNN_*.py files (extracted for nbgrader)
    sources: tuple[Path, ...]  # the files the student handed in (for the fingerprint)


def _safe_name(name: str) -> str:
    return re.sub(r"[^\w.@+-]", "_", name)[:120] or "_"


def _exercise_folder(folder: Path) -> Path:
    inner = folder / "exercises"
    if inner.is_dir() and any(EXERCISE_FILE.match(p.name) for p in inner.iterdir()):
        return inner
    return folder


def is_nbgrader_dir(root: Path) -> bool:
    """`submitted/<student>/<assignment>/*.ipynb` (root may be the course folder or submitted/)."""
    root = root / "submitted" if (root / "submitted").is_dir() else root
    for student in _subdirs(root):
        for assignment in _subdirs(student):
            if any(p.suffix == ".ipynb" for p in assignment.iterdir()):
                return True
    return False


def _subdirs(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def find_students(root: Path, course: Course, extract_to: Path) -> list[Student]:
    """Every student under `root`, in name order."""
    root = Path(root)
    if is_nbgrader_dir(root):
        return _nbgrader_students(root / "submitted" if (root / "submitted").is_dir() else root, course, extract_to)
    students = []
    for folder in _subdirs(root):
        ex_folder = _exercise_folder(folder)
        sources = tuple(sorted(p for p in ex_folder.iterdir() if p.is_file() and p.suffix == ".py"))
        if any(EXERCISE_FILE.match(p.name) for p in sources):
            students.append(Student(folder.name, ex_folder, sources))
    return students


def _nbgrader_students(root: Path, course: Course, extract_to: Path) -> list[Student]:
    students = []
    for folder in _subdirs(root):
        notebooks = tuple(sorted(p for a in _subdirs(folder) for p in a.iterdir() if p.suffix == ".ipynb"))
        if not notebooks:
            continue
        target = extract_to / _safe_name(folder.name)
        files = {}
        for nb in notebooks:
            for name, code in extract_notebook(nb, course).items():
                files[name] = files.get(name, "") + code
        _write_extracted(target, files)
        students.append(Student(folder.name, target, notebooks))
    return students


def _write_extracted(target: Path, files: dict[str, str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    wanted = set(files)
    for old in target.glob("*.py"):
        if old.name not in wanted:
            old.unlink()
    for name, code in files.items():
        path = target / name
        if not path.is_file() or path.read_text(encoding="utf-8") != code:
            _atomic_write(path, code)


_MAGIC = re.compile(r"^\s*[%!]")


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return "\n".join("# " + line if _MAGIC.match(line) else line for line in text.splitlines()) + "\n"


def extract_notebook(path: Path, course: Course) -> dict[str, str]:
    """The exercise files in an nbgrader notebook: {"ex03_param_budget.py": code}.

    A cell belongs to exercise exNN when its nbgrader `grade_id` starts with "exNN"
    (`ex03_answer`, `ex03-solution`), or, failing that, when the notebook's name does.
    An exercise's file is the notebook's code cells that are not test cells (nbgrader
    `grade` without `solution`), in order: the set-up cells (imports) and the solution
    cells of that exercise; solution cells of other exercises are left out. Lines starting
    with % or ! (IPython magics) are commented out.
    """
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    by_id = {ex.id: ex for ex in course.exercises}
    name_match = re.match(r"(ex\d\d)", Path(path).name)
    cells = [c for c in notebook.get("cells", []) if c.get("cell_type") == "code"]
    tagged: list[tuple[str | None, str, dict]] = []
    for cell in cells:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        grade_id = str(meta.get("grade_id", ""))
        match = re.match(r"(ex\d\d)", grade_id)
        owner = match.group(1) if match else None
        if meta.get("grade") and not meta.get("solution"):
            continue  # a test cell: the grader's, not the student's
        kind = "solution" if meta.get("solution") else "setup"
        if kind == "setup" and re.search(r"^\s*(from|import)\s+grader\b", _cell_source(cell), re.M):
            continue  # the grader's own cell (`from grader.notebook import run_check`), not needed here
        tagged.append((owner, kind, cell))
    owners = {o for o, kind, _ in tagged if o and kind == "solution"}
    if not owners and name_match:
        owners = {name_match.group(1)}
        tagged = [(name_match.group(1) if kind == "solution" else o, kind, c) for o, kind, c in tagged]
    files = {}
    for ex_id in sorted(owners):
        if ex_id not in by_id:
            continue
        parts = [_cell_source(c) for o, kind, c in tagged if kind == "setup" and o in (None, ex_id)
                 or kind == "solution" and (o == ex_id or (o is None and len(owners) == 1))]
        files[by_id[ex_id].file] = "\n".join(parts)
    return files


# --------------------------------------------------------------------------- state


def course_fingerprint(course: Course, ids: list[str], lang: str) -> str:
    """Everything a grade depends on besides the student: course, checks, references, probes."""
    return answers_fingerprint(course, extra=f"{STATE_VERSION}|{','.join(ids)}|{lang}")


def student_fingerprint(student: Student) -> str:
    return digest_files(student.sources)


def _state_path(out: Path, student: Student) -> Path:
    return out / "students" / f"{_safe_name(student.name)}.json"


def load_done(out: Path, student: Student, course_fp: str) -> dict | None:
    """The student's saved result, when it is complete and still current."""
    try:
        state = json.loads(_state_path(out, student).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if state.get("course") != course_fp or state.get("files") != student_fingerprint(student):
        return None
    if state.get("student") != student.name or "result" not in state:
        return None
    return state


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _stable(value):
    """Remove what differs between two runs of the same code (object addresses in messages)."""
    if isinstance(value, str):
        return _ADDRESS.sub("0x…", value)
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- the judge


class _Judge:
    """One judge process: a pytest session that grades student after student."""

    def __init__(self, course: Course, ids: list[str], zygote, lock, slot: int, out: Path, lang: str,
                 formats: list[str], corpus, course_fp: str):
        self.course, self.ids, self.zygote, self.lock = course, ids, zygote, lock
        self.slot, self.out, self.lang, self.formats = slot, out, lang, formats
        self.corpus, self.course_fp = corpus, course_fp

    def run(self, tasks, report) -> None:
        """`tasks()` gives the next Student or None; `report(name, state)` after each one."""
        from grader.run.plugin import GradingPlugin
        from grader.judge.references import LiveReferences
        from grader.run.session import pytest_args

        references = LiveReferences(self.course, cache_dir=self.out / "cache")  # nothing written outside OUTDIR
        session0 = self._session(None, references)
        plugin = GradingPlugin(session0)
        loop = _StudentLoop(self, plugin, references, tasks, report)
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
        return GradingSession(self.course, self.ids, submission=student.folder if student else None,
                              zygote=self.zygote, references=references, lang=self.lang, corpus=corpus)

    def grade(self, student: Student, plugin, references, items) -> dict:
        from grader.sandbox import uids
        from grader.report.json_report import as_json_dict
        from grader.model.results import ExerciseResult

        session = self._session(student, references)
        plugin.session = session
        plugin.results = {}
        plugin._views = {}
        started = time.monotonic()
        try:
            for i, item in enumerate(items):
                nextitem = items[i + 1] if i + 1 < len(items) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        finally:
            session.close()
            uids.sweep_uid(self.zygote.fence.get("uid", -1))
        results = [ExerciseResult(self.course.exercise(e), plugin.results.get(e, [])) for e in self.ids]
        state = {
            "version": STATE_VERSION, "student": student.name, "course": self.course_fp,
            "files": student_fingerprint(student), "result": _stable(as_json_dict(results, self.lang)),
        }
        for fmt in self.formats:
            from grader.report.render import render

            text = render(results, fmt, self.lang)
            _atomic_write(self.out / "reports" / f"{_safe_name(student.name)}.{FORMAT_EXT[fmt]}", text + "\n")
        _atomic_write(_state_path(self.out, student), json.dumps(state, ensure_ascii=False, indent=1))
        return {"seconds": time.monotonic() - started, "score": state["result"]["score"]}


class _StudentLoop:
    """A pytest plugin that replaces the run loop: every collected check, once per student."""

    def __init__(self, judge: _Judge, plugin, references, tasks, report):
        self.judge, self.plugin, self.references = judge, plugin, references
        self.tasks, self.report = tasks, report
        self.error = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        items = list(session.items)
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


# --------------------------------------------------------------------------- the driver


def _judge_process(judge: _Judge, task_fd: int, result_fd: int) -> None:
    """Body of a forked judge: read student indexes, grade, report. Never returns."""
    code = 0
    try:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        tasks_in = os.fdopen(task_fd, "r")
        results_out = os.fdopen(result_fd, "w", buffering=1)
        students = judge.students

        def next_task():
            line = tasks_in.readline()
            if not line.strip():
                return None
            return students[int(line)]

        def report(name, info):
            results_out.write(json.dumps({"done": name, **info}) + "\n")

        judge.run(next_task, report)
    except BaseException as err:  # noqa: BLE001
        try:
            os.write(2, f"grade batch: judge {judge.slot} failed: {type(err).__name__}: {err}\n".encode())
        except OSError:
            pass
        code = 3
    finally:
        sys.stdout.flush()
        os._exit(code)


class _SharedZygote:
    """A zygote used by several forked judges: spawning takes a cross-process lock."""

    def __init__(self, zygote, lock, fence: dict):
        self._zygote, self._lock = zygote, lock
        self.fence = fence
        self.pid = zygote.pid

    def start(self):
        return self

    def spawn(self, setup: dict):
        with self._lock:
            return self._zygote.spawn({**setup, "fence": {**self.fence, **(setup.get("fence") or {})}})

    def close(self) -> None:
        pass


def run_batch(course: Course, root: Path, out: Path, *, jobs: int = 1, shard: tuple[int, int] = (1, 1),
              ids: list[str] | None = None, lang: str = "zh", formats: list[str] | None = None,
              progress: bool | None = None, echo=None) -> dict:
    """Grade every student under `root` into `out`; returns the gradebook (also written)."""
    root, out = Path(root).resolve(), Path(out).resolve()
    sys.dont_write_bytecode = True  # the judges write nothing outside OUTDIR, not even __pycache__
    out.mkdir(parents=True, exist_ok=True)
    ids = ids or [e.id for e in course.exercises]
    formats = formats or []
    students = find_students(root, course, out / "extracted")
    index, count = shard
    students = [s for n, s in enumerate(students) if n % count == index - 1]
    course_fp = course_fingerprint(course, ids, lang)
    pending = [n for n, s in enumerate(students) if load_done(out, s, course_fp) is None]
    if pending:
        _grade_pending(course, root, out, students, pending, ids, lang, formats, jobs, course_fp, progress, echo)
    return assemble(out, course, ids, students, course_fp, lang)


def _grade_pending(course, root, out, students, pending, ids, lang, formats, jobs, course_fp, progress, echo):
    import multiprocessing

    from grader.sandbox import uids
    from grader.run.startup import load_judge, resolve_corpus, start_zygote

    hide = [str(root), str(out), str(course.solutions_dir), str(course.checks_dir)]
    zygote = start_zygote(course, hide=hide)  # before torch, the references, the checks
    corpus = resolve_corpus(course)
    try:
        load_judge()

        lock = multiprocessing.Lock()
        jobs = max(1, min(jobs, len(pending)))
        base_fence = dict(zygote.fence)

        def make_judge(slot: int) -> _Judge:
            shared = _SharedZygote(zygote, lock, {**base_fence, "uid": uids.slot_uid(slot), "gid": uids.slot_uid(slot)})
            judge = _Judge(course, ids, shared, lock, slot, out, lang, formats, corpus, course_fp)
            judge.students = students
            return judge

        _drive(make_judge, students, pending, jobs, progress, echo)
    finally:
        zygote.close()


class _Slot:
    def __init__(self, slot: int, pid: int, task_w: int, result_r, current=None):
        self.slot, self.pid, self.task_w, self.result_r = slot, pid, task_w, result_r
        self.current = current
        self.buffer = b""


def _fork_judge(make_judge, slot: int) -> _Slot:
    task_r, task_w = os.pipe()
    result_r, result_w = os.pipe()
    judge = make_judge(slot)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(task_w)
        os.close(result_r)
        _judge_process(judge, task_r, result_w)
    os.close(task_r)
    os.close(result_w)
    return _Slot(slot, pid, task_w, result_r)


def _drive(make_judge, students, pending, jobs, progress, echo) -> None:
    """Hand students to judges one at a time, show progress, replace a judge that dies."""
    queue = list(pending)
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
            try:
                os.close(s.task_w)
            except OSError:
                pass
            s.task_w = -1

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
                        msg = json.loads(line)
                        bar.advance(msg["done"], msg.get("score"))
                        give(s)
                    continue
                # the judge ended: normally after its task pipe closed; else it died
                selector.unregister(s.result_r)
                os.close(s.result_r)
                try:
                    os.waitpid(s.pid, 0)
                except ChildProcessError:
                    pass
                live -= 1
                if s.current is not None:
                    n = s.current
                    if tries.get(n, 0) < 2:
                        queue.insert(0, n)
                    else:
                        _write_crash(make_judge(s.slot), students[n])
                        bar.advance(students[n].name, 0)
                    if s.task_w >= 0:
                        os.close(s.task_w)
                    if queue:
                        fresh = _fork_judge(make_judge, s.slot)
                        selector.register(fresh.result_r, selectors.EVENT_READ, fresh)
                        live += 1
                        give(fresh)
            bar.refresh()
    finally:
        bar.close()
        for s in slots:
            if s.task_w >= 0:
                try:
                    os.close(s.task_w)
                except OSError:
                    pass


def _write_crash(judge: _Judge, student: Student) -> None:
    """A student whose grading killed the judge twice: every exercise 0, with a note."""
    exercises = []
    for ex_id in judge.ids:
        ex = judge.course.exercise(ex_id)
        exercises.append({"id": ex.id, "title": ex.title(judge.lang), "status": "failed", "score": 0,
                          "max_score": ex.points, "checks": [{
                              "name": "grading", "title": "grading", "passed": False, "score": 0,
                              "max_score": ex.points, "message": "评分进程崩溃 / the grader crashed on this submission",
                              "public": True, "manual": False, "kind": "crash", "diagnosis": None}]})
    result = {"score": 0, "max_score": sum(e["max_score"] for e in exercises), "exercises": exercises}
    state = {"version": STATE_VERSION, "student": student.name, "course": judge.course_fp,
             "files": student_fingerprint(student), "result": result}
    _atomic_write(_state_path(judge.out, student), json.dumps(state, ensure_ascii=False, indent=1))


class _Bar:
    """A rich progress bar with ETA on stderr (a line per student when stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool | None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.total = total
        self.done = 0
        self._progress = None
        if self.enabled and total:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      console=Console(stderr=True))
            self._task = self._progress.add_task("grading", total=total)
            self._progress.start()

    def advance(self, name: str, score) -> None:
        self.done += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, description=f"{name[:24]:<24}")

    def refresh(self) -> None:
        if self._progress is not None:
            self._progress.refresh()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


# --------------------------------------------------------------------------- the gradebook


def assemble(out: Path, course: Course, ids: list[str], students: list[Student], course_fp: str,
             lang: str) -> dict:
    """grades.csv and results.json from the per-student files (atomically)."""
    entries = {}
    for s in students:
        state = load_done(out, s, course_fp)
        if state is not None:
            entries[s.name] = state["result"]
    book = {"version": STATE_VERSION, "exercises": [_exercise_header(course, e, lang) for e in ids],
            "students": {name: entries[name] for name in sorted(entries)}}
    write_gradebook(out, book)
    return book


def _exercise_header(course: Course, ex_id: str, lang: str) -> dict:
    ex = course.exercise(ex_id)
    return {"id": ex.id, "title": ex.title(lang), "max_score": ex.points}


def write_gradebook(out: Path, book: dict) -> None:
    _atomic_write(Path(out) / "results.json", json.dumps(book, ensure_ascii=False, indent=1, sort_keys=False) + "\n")
    _atomic_write(Path(out) / "grades.csv", grades_csv(book))


def grades_csv(book: dict) -> str:
    ids = [e["id"] for e in book["exercises"]]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *ids, "total", "max"])
    writer.writerow(["(max)", *[e["max_score"] for e in book["exercises"]],
                     sum(e["max_score"] for e in book["exercises"]), ""])
    for name, result in book["students"].items():
        scores = {e["id"]: e["score"] for e in result["exercises"]}
        writer.writerow([name, *[scores.get(i, 0) for i in ids], result["score"], result["max_score"]])
    return buffer.getvalue()


def merge_gradebooks(folders: list[Path], out: Path) -> dict:
    """Join the results.json of several shards (a student in two shards: the later folder wins)."""
    merged, headers = {}, None
    for folder in folders:
        book = json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
        if headers is None:
            headers = book["exercises"]
        elif [e["id"] for e in book["exercises"]] != [e["id"] for e in headers]:
            raise click.UsageError(f"{folder}: 练习不同 / graded other exercises than {folders[0]}")
        merged.update(book["students"])
    book = {"version": STATE_VERSION, "exercises": headers or [],
            "students": {name: merged[name] for name in sorted(merged)}}
    Path(out).mkdir(parents=True, exist_ok=True)
    write_gradebook(out, book)
    return book


# --------------------------------------------------------------------------- commands


