"""Run one check from a notebook: what every test cell of the nbgrader notebooks calls.

    run_check("ex03", "test_answer_params", globals())

runs the check function `test_answer_params` of `grader/per_exercise/ex03/checks.py`
(the same function `grade ex03` runs) with `student` = the notebook's own namespace (the
functions the student defined in the answer cells, run in this process) and `reference`
= the reference solutions (or, in a student release, the recorded answers). It prints
the check's report like the command line does (pass or fail, expected against got, shapes
first, the known mistake the answer matches), wrapped to `WRAP` columns so that it reads in
nbgrader's feedback page, and raises `AssertionError` when the check fails, so that nbgrader
takes the cell's points away. A hidden check's report and error are its student's view
(grader.report.student_view: pass or fail, the points, shapes and the diagnosis; no input,
value, traceback or path), since the autograded notebook is what `nbgrader
generate_feedback` hands the student; the error shows one line, never the kit's frames. On a pass it returns None: the cell evaluates to nothing, so
nbgrader reads no partial-credit value from it (a value that is not a number gets a
"cannot be converted to a float" warning per cell). `check_result` is the same run
returning the `CheckResult`, for Python callers.

The student's code runs in the notebook's kernel, as nbgrader always runs it: the
isolation of `grade` (a worker process with limits) does not apply here.
"""

from __future__ import annotations

import contextlib
import inspect
import importlib
import importlib.util
import io
import os
import sys
import time
import types
from pathlib import Path

from grader.model.course import Course, load_course

_courses: dict[str, Course] = {}
_references: dict[str, object] = {}
_corpus: dict[str, object] = {}


class CheckFailedInNotebook(AssertionError):
    """The check did not pass: nbgrader deducts the cell's points.

    IPython shows it as its one line (`_render_traceback_`, IPython's hook for exceptions
    that draw their own traceback): the frames would name the kit's files on the
    instructor's machine, and the report above the error already says why.

        >>> CheckFailedInNotebook("ex05 test_lm_loss_random: wrong values")._render_traceback_()
        ['CheckFailedInNotebook: ex05 test_lm_loss_random: wrong values']
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def _course() -> Course:
    path = os.environ.get("GRADE_COURSE") or ""
    if path not in _courses:
        _courses[path] = load_course(Path(path) if path else None)
    return _courses[path]


def _references_for(course: Course):
    key = str(course.root)
    if key not in _references:
        from grader.run.startup import references_for

        _references[key] = references_for(course)[0]
    return _references[key]


def _corpus_path(course: Course):
    key = str(course.root)
    if key not in _corpus:
        from grader.run.startup import corpus_provider

        _corpus[key] = corpus_provider(course)
    return _corpus[key]()


def _lang(lang: str | None) -> str:
    if lang in ("zh", "en"):
        return lang
    from grader.model.messages import default_lang

    return default_lang()


def namespace_module(namespace: dict) -> types.ModuleType:
    """The module whose globals are `namespace` (IPython's `__main__`), so that probes
    that swap a module global for one call (`get_batch` for ex11) reach the functions the
    student defined; a plain module holding a copy of the names otherwise."""
    if isinstance(namespace, types.ModuleType):
        return namespace
    for module in list(sys.modules.values()):
        if isinstance(module, types.ModuleType) and getattr(module, "__dict__", None) is namespace:
            return module
    module = types.ModuleType("notebook")
    module.__dict__.update(namespace)
    return module


def _cell_folder(module: types.ModuleType) -> str | None:
    """Where the kernel keeps the cells' code (ipykernel: /tmp/ipykernel_<pid>/): frames
    from there are the student's own and are shown in a traceback."""
    for value in list(vars(module).values()):
        code = getattr(value, "__code__", None)
        filename = getattr(code, "co_filename", "")
        if filename and os.path.isabs(filename) and "ipykernel" in filename:
            return os.path.dirname(filename)
    return None


def _check_function(course: Course, exercise_id: str, check_name: str):
    ex = course.exercise(exercise_id)
    if _is_package_course(course):
        module = importlib.import_module(ex.checks_module)
    else:  # GRADE_COURSE names another kit: load its check module from the file
        name = f"_course_checks_{abs(hash(str(course.root)))}.{ex.id}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, course.unit(ex.id) / "checks.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    func = getattr(module, check_name, None)
    if func is None:
        raise LookupError(f"{exercise_id}: 没有检查 {check_name} / no check named {check_name} "
                          f"(这个环境里的评分工具不含隐藏测试？/ is this a student release without hidden checks?)")
    return ex, func


def _is_package_course(course: Course) -> bool:
    import grader

    return Path(grader.__file__).resolve().parent == (course.root / "grader").resolve()


def _source_of(module: types.ModuleType):
    """The judge's reading of the student's code (grader.judge.source): the module's file, or
    the kernel's cells that define its functions."""
    from grader.judge.source import SubmissionSource

    path = getattr(module, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        return SubmissionSource.of_module(module)
    return SubmissionSource.of_namespace(module)


def _fixed_draws():
    from grader.judge.draws import Draws

    return Draws()


@contextlib.contextmanager
def _output_dropped():
    """stdout and stderr written while this runs go nowhere."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def check_result(exercise_id: str, check_name: str, namespace: dict, *, lang: str | None = None):
    """Run one check on the notebook's definitions; the `CheckResult` (nothing printed or raised)."""
    from grader.model.results import CheckFailed, Finding
    from grader.judge.hiding import hidden_view_of
    from grader.judge.verdicts import StudentView
    from grader.model.results import CheckResult, title_from_doc
    from grader.judge.subjects import InProcessSubject
    from grader.run.markers import marks_of

    lang = _lang(lang)
    course = _course()
    ex, func = _check_function(course, exercise_id, check_name)
    marks = marks_of(func)
    points = int(marks.get("points", (0,))[0])
    timeout = float(marks["timeout_s"][0]) if "timeout_s" in marks else ex.timeout
    module = namespace_module(namespace)
    view = StudentView(InProcessSubject(module, _cell_folder(module)), timeout, goes_on=True)
    fixtures = {"student": lambda: view, "reference": lambda: _references_for(course)(exercise_id),
                "source": lambda: _source_of(module),
                "corpus_path": lambda: _corpus_path(course), "lang": lambda: lang,
                "draws": _fixed_draws}  # in-kernel: the inputs as written (grader.judge.draws)
    started = time.monotonic()
    finding = None
    # What the submission prints during a hidden check is not shown (its inputs, if it prints
    # them), as in the command line's student view; a public check's output stays in the cell.
    with contextlib.nullcontext() if "public" in marks else _output_dropped():
        try:
            wanted = inspect.signature(func).parameters
            unknown = [name for name in wanted if name not in fixtures]
            if unknown:
                raise TypeError(f"check {check_name} asks for unknown fixtures {unknown}")
            try:
                func(**{name: fixtures[name]() for name in wanted})
            except Exception as err:  # noqa: BLE001 - settle re-raises what it does not replace
                view.settle(err)
            view.settle()  # the check's first failed comparison, diagnosed over every case it compared
        except CheckFailed as failed:
            finding = failed.finding
        except Exception as err:  # a bug in the grader (or the data is missing): say so plainly
            finding = Finding("grader_error", check_name, zh=f"评分程序出错：{type(err).__name__}: {err}",
                              en=f"grader error: {type(err).__name__}: {err}")
    if finding is not None and "public" not in marks:
        finding.hidden_view = hidden_view_of(view, finding)  # what the student's report may show
    return CheckResult(exercise=exercise_id, name=check_name, title=title_from_doc(func.__doc__, check_name),
                       max_points=points, passed=finding is None, public="public" in marks,
                       manual="manual" in marks, finding=finding, shown=list(view.shown),
                       attachments=dict(view.attachments), seconds=time.monotonic() - started)


WRAP = 100  # display columns of a printed report line (CJK characters count two)


def wrap_line(line: str, columns: int = WRAP) -> list[str]:
    """One report line cut to `columns` display columns, continuations indented under it.

    Breaks at a space when one is near, else between characters (Chinese has no spaces).
    Example: wrap_line("  ✗ " + "x" * 150, 100) -> ["  ✗ xxx…", "      xxx…"] (each ≤ 100 wide).
    """
    from grader.report.layout import width

    if width(line) <= columns:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    out, current = [], ""
    for ch in line:
        if width(current + ch) > columns:
            cut = current.rfind(" ")
            if cut > len(indent) + columns // 2:  # a space near the end: break there
                out.append(current[:cut])
                current = indent + current[cut + 1:]
            else:
                out.append(current)
                current = indent
        current += ch
    out.append(current)
    return [part.rstrip() for part in out if part.strip()]


def run_check(exercise_id: str, check_name: str, namespace: dict, *, lang: str | None = None,
              quiet: bool = False) -> None:
    """Run one check on the notebook's definitions; print its report; raise if it fails.

    Returns None, so that a test cell evaluates to nothing (see the module's docstring).
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out of the traceback
    from grader.report import text as report
    from grader.report.layout import pad
    from grader.report.student_view import student_check

    lang = _lang(lang)
    result = student_check(check_result(exercise_id, check_name, namespace, lang=lang))
    if not quiet:
        ex = _course().exercise(exercise_id)
        lines = [pad(f"{exercise_id}  {ex.title(lang)}", 66) + f"{result.points}/{result.max_points}"]
        lines += report._check_lines(result, exercise_id, lang, lambda text, **_: text)
        print("\n".join(part for line in lines for text in line.splitlines() for part in wrap_line(text)))
    if not result.passed and not result.manual:
        reason = report.check_message(result, lang) or (result.finding.kind if result.finding else "failed")
        raise CheckFailedInNotebook(f"{exercise_id} {check_name}: {reason}")
    return None
