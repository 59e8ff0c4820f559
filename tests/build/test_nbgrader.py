"""`grade nbgrader OUT` end to end with the real nbgrader: generate, autograde, feedback, export,
and `grade batch --nbgrader-db` putting the honest scores into nbgrader's gradebook.

The course folder is built, released and autograded once (the `autograded` fixture):
`nbgrader generate_assignment` makes the student versions of both notebooks, and students hand
in notebooks made from those versions:

- `solved` (both assignments): every answer cell filled in with the reference: full marks
  (after the instructor grades ex04's written answer through nbgrader's gradebook, as
  formgrader does);
- `stubs` (chapter 5): the notebook as released: zero;
- `wrong` (chapter 5): solved, but ex01's functions all return wrong (and long) answers, and
  `count_targets` (hidden checks only) prints its inputs: exactly ex01's points lost, the
  printed reports wrapped, and the feedback page shows the hidden checks as the command
  line's student view does (no input, value, printed output, traceback or path);
- `cheater` (chapter 5): the stubs, with an answer cell that rebinds `run_check`: nbgrader's
  own autograde gives it every automatic point, `grade batch --nbgrader-db` the honest zero;
- `raising` (bigram): solved, but ex08's answer cell raises before defining anything: exactly
  ex08's points lost, and the later exercises that build on ex08 (ex11, ex12) still graded.

`nbgrader autograde` runs each notebook in a real kernel with nbgrader's database (each
autograde of the bigram notebook trains ex12 for real); `generate_feedback` renders the
pages; `nbgrader export` writes the CSV whose totals are checked. nbgrader's commands run in
this process through its own application, as nbgrader's test suite runs them; the kernels are
processes of their own. A test that changes the gradebook works on a copy of the graded
folder. Nothing is mocked.

The test cells (nbgrader 的测试单元格：通过时只打印报告、不求值；评分单元格有标题；反馈换行):

- nbgrader's partial-credit warning ("… cannot be converted to a float"), which it logs for
  every test cell whose value is not a number: none in the whole autograde;
- every test cell's outputs: the check's report printed on stdout, no execute_result (a pass
  evaluates to nothing), nothing on stderr (nbgrader scores a cell with stderr output 0);
- the feedback page's score index names each test cell by its check's title (nbgrader's own
  template says "Test cell" for all of them), and the printed reports are wrapped.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import html
import importlib.util
import io
import logging
import os
import re
import shutil
import sys
from pathlib import Path

import click
import pytest

from grader.model.course import load_course
from grader.notebook import WRAP, wrap_line
from grader.report.layout import width
from tests.in_process import grade

ROOT = Path(__file__).resolve().parents[2]
# nbformat and nbgrader are imported by the tests that use them, not when the suite is collected
# (every xdist worker collects every module; importing them costs seconds)
pytestmark = [
    pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("nbformat", "nbgrader")),
                       reason="needs nbformat and nbgrader (pip install -e '.[instructor]')"),
    pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit"),
]

TOOLS = str(Path(sys.executable).parent)  # nbgrader's own commands (alembic)
MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
WARNING = "cannot be converted to"
STUDENTS = {"ch05": ("solved", "stubs", "wrong", "cheater"), "bigram": ("solved", "raising")}


@pytest.fixture(scope="module")
def course():
    return load_course()


@pytest.fixture(scope="module")
def folder(course, tmp_path_factory) -> Path:
    from grader.build.nbgrader_export import build_nbgrader

    out = tmp_path_factory.mktemp("nbgrader") / "course"
    build_nbgrader(course, out, echo=lambda *_: None)
    return out


def alembic_on_path(patch: pytest.MonkeyPatch) -> None:
    """nbgrader runs `alembic` (its database's migrations) from PATH: this environment's."""
    patch.setenv("PATH", os.pathsep.join([TOOLS, os.environ.get("PATH", "")]))


def nbgrader(folder: Path, *args: str) -> str:
    """`nbgrader ARGS` in the course folder, run in this process as nbgrader's own test suite runs
    it (an nbgrader process spends seconds starting up; the kernels `autograde` starts are real
    processes all the same, with this environment); the log it wrote."""
    from jupyter_core.application import NoStart
    from nbgrader.apps.nbgraderapp import NbGraderApp

    log, app, path = io.StringIO(), NbGraderApp.instance(), list(sys.path)  # the app puts its folder first
    with pytest.MonkeyPatch.context() as patch, contextlib.chdir(folder):
        patch.setenv("GRADE_LANG", "en")
        alembic_on_path(patch)
        try:
            app.initialize(list(args))
            app.init_logging(logging.StreamHandler, [log], color=False, subapps=True)
            app.start()
            code = 0
        except NoStart:
            code = 0
        except SystemExit as stop:
            code = stop.code
        finally:
            app.reset()
            sys.path[:] = path
    assert code == 0, f"nbgrader {' '.join(args)} failed ({code}):\n{log.getvalue()[-5000:]}"
    return log.getvalue()


def meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def cell_points(nb) -> dict[str, int]:
    return {meta(c)["grade_id"]: meta(c)["points"] for c in nb.cells if meta(c).get("grade")}


def exercise_points(nb, exercise_id: str) -> int:
    return sum(p for gid, p in cell_points(nb).items() if gid.startswith(exercise_id + "_"))


def test_layout_and_schema(folder, course):
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

    assert (folder / "nbgrader_config.py").is_file()
    for assignment in ("ch05", "bigram"):
        nb = nbformat.read(folder / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        nbformat.validate(nb)
        MetadataValidator().validate_nb(nb)
        assert all(meta(c).get("schema_version") == 3 for c in nb.cells)
        for ex in course.of_assignment(assignment):
            graded = exercise_points(nb, ex.id)
            written = 2 if ex.id == "ex04" else 0
            assert graded == ex.points + written, ex.id  # the checks' points, as course.toml says
    ch05 = nbformat.read(folder / "source" / "ch05" / "ch05.ipynb", as_version=4)
    written = [c for c in ch05.cells if meta(c).get("grade_id") == "ex04_WHY_PARALLEL"]
    assert written and written[0].cell_type == "markdown" and meta(written[0])["solution"] and meta(written[0])["grade"]


def test_run_check_matches_the_command_line(course, capsys):
    """A test cell's call on the reference passes and prints expected/got; on a stub it fails."""
    import importlib.util

    from grader.notebook import run_check

    def load(folder, name):
        spec = importlib.util.spec_from_file_location(f"nbtest_{folder.name}_{name}", folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    good = load(course.solutions_dir, "ex01_windows")
    assert run_check("ex01", "test_make_windows_course_example", vars(good), lang="en") is None  # a quiet cell
    printed = capsys.readouterr().out
    assert "✓ make_windows" in printed and "2/2" in printed  # a passing check is one short line
    stub = load(course.exercises_dir, "ex01_windows")
    with pytest.raises(AssertionError, match="not implemented"):
        run_check("ex01", "test_make_windows_course_example", vars(stub), lang="en")


def solution_sources(source_nb) -> dict[str, str]:
    """grade_id -> the reference's content of each answer cell (markers dropped)."""
    out = {}
    for cell in source_nb.cells:
        if meta(cell).get("solution"):
            out[meta(cell)["grade_id"]] = "\n".join(l for l in cell.source.splitlines() if not MARKERS.match(l))
    return out


WRONG_EX01 = '''import sys


def shift_pairs(tokens):
    """Wrong on purpose, and long: the printed reports must wrap."""
    return [-1] * 120, [-2] * 120


def make_windows(tokens, block_size, stride=1):
    return [([-1] * 40, [-2] * 40)] * 30


def count_targets(n_tokens, block_size, stride=1):
    print("HAR" + "VEST", n_tokens, block_size, stride)  # a hidden check's inputs, printed
    print("HAR" + "VEST", n_tokens, block_size, stride, file=sys.stderr)
    return -1
'''

# An answer cell written the way an attacker writes it: the test cells below it call
# `run_check` from the notebook's namespace, so rebinding it (and patching the module, for
# cells that import it again) makes every in-kernel check pass.
CHEAT = '''import grader.notebook


def run_check(*args, **kwargs):
    return None


grader.notebook.run_check = run_check
'''


def submission(release_nb, solutions: dict[str, str], kind: str):
    import nbformat
    nb = nbformat.from_dict(release_nb)
    for cell in nb.cells:
        gid = meta(cell).get("grade_id")
        if kind == "cheater" and gid == "ex01_answer":
            cell.source = CHEAT + "\n" + cell.source  # every answer stays a stub
        if kind in ("stubs", "cheater"):
            continue
        if meta(cell).get("solution") and gid in solutions:
            cell.source = solutions[gid]
        if kind == "wrong" and gid == "ex01_answer":
            cell.source = WRONG_EX01
        if kind == "raising" and gid == "ex08_answer":
            cell.source = 'raise RuntimeError("学生的单元格出错 / the student\'s cell fails")\n' + cell.source
    return nb


@pytest.fixture(scope="module")
def autograded(folder) -> dict:
    """Both assignments released, every student's notebook handed in and autograded, chapter 5's
    feedback generated: once for the whole module."""
    import nbformat
    release, source = {}, {}
    nbgrader(folder, "generate_assignment", "*", "--force")  # the id is a glob: every assignment, one start-up
    for assignment, students in STUDENTS.items():
        release[assignment] = nbformat.read(folder / "release" / assignment / f"{assignment}.ipynb", as_version=4)
        source[assignment] = nbformat.read(folder / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        for student in students:
            target = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(submission(release[assignment], solution_sources(source[assignment]), student), target)
    log = nbgrader(folder, "autograde", "*", "--create", "--force")
    nbgrader(folder, "generate_feedback", "ch05", "--force")
    return {"folder": folder, "release": release, "source": source, "log": log}


def test_release_hides_solutions_and_hidden_checks(autograded):
    from nbgrader.nbgraderformat import MetadataValidator

    for assignment in STUDENTS:
        MetadataValidator().validate_nb(autograded["release"][assignment])
        text = (autograded["folder"] / "release" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
        hidden = [c for c in autograded["source"][assignment].cells if "BEGIN HIDDEN TESTS" in c.source]
        assert hidden
        for cell in hidden:  # the hidden checks' calls are gone, their cells (and points) stay
            assert re.search(r'run_check\("ex\d\d", "(\w+)"', cell.source).group(0) not in text


class _BareRaise(ast.NodeTransformer):
    """`raise NotImplementedError("ex01: 在这里实现 f …")` as nbgrader's code stub writes it."""

    def visit_Raise(self, node):
        call = node.exc
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "NotImplementedError":
            call.args = []
        return node


def test_the_released_notebook_shows_what_the_stub_shows(autograded, course):
    """Each answer cell a student is handed holds the stub's code (exercises/): its imports,
    signatures, docstrings and given lines, nbgrader's `raise NotImplementedError()` wherever the
    stub raises; each constant the stub leaves `NotImplemented` has a cell of its own, cleared."""
    siblings = {e.module for e in course.exercises}
    for assignment in STUDENTS:
        cells = {meta(c).get("grade_id"): c for c in autograded["release"][assignment].cells}
        for ex in course.of_assignment(assignment):
            stub = ast.parse((course.exercises_dir / ex.file).read_text(encoding="utf-8"))
            constants = [t.id for n in stub.body if isinstance(n, ast.Assign) and getattr(n.value, "id", "") ==
                         "NotImplemented" for t in n.targets]
            code = [n for n in stub.body[1:] if not (isinstance(n, ast.ImportFrom) and n.module in siblings)
                    and not (isinstance(n, ast.Assign) and getattr(n.value, "id", "") == "NotImplemented")]
            released = ast.parse(cells[f"{ex.id}_answer"].source).body
            assert [ast.dump(n) for n in released] == [ast.dump(_BareRaise().visit(n)) for n in code], ex.id
            for name in constants:
                cell = cells[f"{ex.id}_{name}"]
                assert name not in cell.source and ("NotImplementedError()" in cell.source
                                                    or cell.cell_type == "markdown"), cell.source


def export_scores(folder: Path) -> dict[tuple[str, str], float]:
    (folder / "grades.csv").unlink(missing_ok=True)
    nbgrader(folder, "export", "--to", "grades.csv")
    return {(r["assignment"], r["student_id"]): float(r["score"])
            for r in csv.DictReader(open(folder / "grades.csv", encoding="utf-8"))}


def graded_copy(autograded, tmp_path: Path) -> Path:
    """The graded course folder, copied: a test that changes the gradebook changes its own."""
    folder = tmp_path / "course"
    shutil.copytree(autograded["folder"], folder, symlinks=True)
    return folder


def test_autograde_then_export(autograded, course, tmp_path):
    from nbgrader.api import Gradebook

    folder, source = graded_copy(autograded, tmp_path), autograded["source"]
    # the instructor grades the written answer (what formgrader does), for the solved student
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        by_hand = gb.find_grade("ex04_WHY_PARALLEL", "ch05", "ch05", "solved")
        assert by_hand.auto_score is None and by_hand.needs_manual_grade
        by_hand.manual_score = by_hand.max_score
        gb.db.commit()

    nbgrader(folder, "export", "--to", "grades.csv")
    rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(open(folder / "grades.csv", encoding="utf-8"))}
    full = {a: sum(cell_points(source[a]).values()) for a in STUDENTS}
    written = cell_points(source["ch05"])["ex04_WHY_PARALLEL"]
    lost = {("ch05", "wrong"): exercise_points(source["ch05"], "ex01"),
            ("bigram", "raising"): exercise_points(source["bigram"], "ex08")}
    expected = {}
    for assignment, students in STUDENTS.items():
        for student in students:
            if student == "stubs":
                expected[assignment, student] = 0
            elif student == "cheater":  # nbgrader's own autograde: every automatic point (see below)
                expected[assignment, student] = full[assignment] - written
            else:  # the written answer counts only once graded by hand (here: the solved student's)
                ungraded = written if assignment == "ch05" and student != "solved" else 0
                expected[assignment, student] = full[assignment] - ungraded - lost.get((assignment, student), 0)
    got = {key: float(rows[key]["score"]) for key in expected}
    assert got == {k: float(v) for k, v in expected.items()}, (got, expected)
    for key in expected:
        assert float(rows[key]["max_score"]) == full[key[0]]
    assert lost[("ch05", "wrong")] == course.exercise("ex01").points
    assert lost[("bigram", "raising")] == course.exercise("ex08").points


def test_batch_writes_the_honest_scores_into_nbgraders_gradebook(autograded, tmp_path):
    """In nbgrader's own autograde a cell that replaces run_check takes the automatic points;
    `grade batch submitted/ --nbgrader-db gradebook.db` puts the honest scores in their place
    (what `nbgrader export` reads), keeping the grades an instructor gave by hand."""
    from nbgrader.api import Gradebook

    folder, points = graded_copy(autograded, tmp_path), cell_points(autograded["source"]["ch05"])
    written = points["ex04_WHY_PARALLEL"]
    automatic = sum(points.values()) - written
    in_kernel = export_scores(folder)
    assert in_kernel[("ch05", "cheater")] == automatic  # the attack works inside nbgrader's kernel

    # the instructor's hand: solved's written answer, and an override on one of cheater's cells
    db = folder / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.find_grade("ex04_WHY_PARALLEL", "ch05", "ch05", "solved").manual_score = written
        gb.find_grade("ex01_test_make_windows_course_example", "ch05", "ch05", "cheater").manual_score = 0.5
        gb.db.commit()

    proc = grade("batch", str(folder / "submitted"), "--out", str(tmp_path / "out"), "-j", "1", "--only", "ch05",
                 "--no-progress", "--nbgrader-db", str(db), env={"GRADE_LANG": "en"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "manual grades kept" in proc.stdout

    honest = export_scores(folder)
    assert honest[("ch05", "cheater")] == 0.5  # stubs earn nothing; the hand-given half point stays
    assert honest[("ch05", "solved")] == sum(points.values())
    assert honest[("ch05", "stubs")] == 0
    assert honest[("ch05", "wrong")] == in_kernel[("ch05", "wrong")]  # honest answers: the kernel's score stands
    with Gradebook(f"sqlite:///{db}") as gb:
        kept = gb.find_grade("ex01_test_make_windows_course_example", "ch05", "ch05", "cheater")
        assert kept.auto_score == 0 and kept.manual_score == 0.5 and kept.needs_manual_grade
        hidden = gb.find_grade("ex01_test_make_windows_random_strides", "ch05", "ch05", "solved")
        assert hidden.auto_score == points["ex01_test_make_windows_random_strides"] > 0
        assert not hidden.needs_manual_grade


def _test_cells(nb):
    return [c for c in nb.cells if meta(c).get("grade") and not meta(c).get("solution") and c.cell_type == "code"]


def test_autograde_logs_no_partial_credit_warning(autograded):
    assert "autograd" in autograded["log"].lower()  # the log was captured at all
    assert autograded["log"].count(WARNING) == 0, [l for l in autograded["log"].splitlines() if WARNING in l][:3]


def test_test_cells_print_their_report_and_evaluate_to_nothing(autograded):
    import nbformat
    for student in ("solved", "wrong"):
        nb = nbformat.read(autograded["folder"] / "autograded" / student / "ch05" / "ch05.ipynb", as_version=4)
        cells = _test_cells(nb)
        assert len(cells) > 20
        for cell in cells:
            kinds = [o.output_type for o in cell.outputs]
            assert "execute_result" not in kinds, (cell.source, cell.outputs)
            assert not any(o.output_type == "stream" and o.name == "stderr" for o in cell.outputs), cell.outputs
        printed = ["".join(o.text for o in c.outputs if o.output_type == "stream") for c in cells]
        assert all(printed), "every test cell prints the check's report"
        for text in printed:
            assert all(width(line) <= WRAP for line in text.splitlines()), text
        failed = [c for c in cells if any(o.output_type == "error" for o in c.outputs)]
        assert (student == "solved") == (not failed)
        if student == "wrong":
            assert {meta(c)["grade_id"].split("_")[0] for c in failed} == {"ex01"}
            assert any(width(line) > WRAP // 2 for text in printed for line in text.splitlines())  # long, wrapped


def test_grade_cells_are_titled(autograded):
    for cell in _test_cells(autograded["source"]["ch05"]):
        title = cell.metadata["gpt_course"]["title"]
        assert title.startswith(meta(cell)["grade_id"].split("_")[0] + " · ") and "|" in title
        assert title in cell.source.splitlines()[0]  # the first comment line names the check


def test_feedback_index_names_the_checks(autograded):
    source = autograded["source"]["ch05"]
    page = (autograded["folder"] / "feedback" / "solved" / "ch05" / "ch05.html").read_text(encoding="utf-8")
    toc = page[page.index('<div id="toc">'):page.index("</ol>")]
    assert "Test cell" not in toc
    titles = [c.metadata["gpt_course"]["title"] for c in _test_cells(source)]
    assert sum(html.escape(t, quote=False) in toc or t in toc for t in titles) == len(titles)
    graded_cells = [c for c in source.cells if meta(c).get("grade")]
    possible = sum(meta(c)["points"] for c in graded_cells)
    written = sum(meta(c)["points"] for c in graded_cells if c.cell_type == "markdown")  # ex04, graded by hand
    assert f"(Score: {float(possible - written)} / {float(possible)})" in page  # every automatic point


def _page_text(page: str) -> str:
    """The feedback page's text with no tags and no white space (a wrapped line joins up)."""
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", page)))


def test_feedback_shows_hidden_checks_as_their_students_view(autograded, course):
    """What `nbgrader generate_feedback` hands a student with failing hidden checks: pass or
    fail, points, shapes and the diagnosis, as `grade`'s student view; none of the inputs, the
    expected values, the instructor's reasons with values, what the code printed, a traceback's
    frames or a path on the instructor's machine."""
    import nbformat
    from grader.notebook import check_result
    from grader.report.student_view import call_name, student_check

    folder = autograded["folder"]
    page = (folder / "feedback" / "wrong" / "ch05" / "ch05.html").read_text(encoding="utf-8")
    text = _page_text(page)
    wrong = {}
    exec(compile(WRONG_EX01, "wrong_ex01", "exec"), wrong)
    hidden = [c for c in _test_cells(autograded["source"]["ch05"]) if "BEGIN HIDDEN TESTS" in c.source
              and meta(c)["grade_id"].startswith("ex01_")]
    assert len(hidden) >= 5
    for cell in hidden:  # the instructor's view of the same failure holds inputs and values
        full = check_result("ex01", cell.metadata["gpt_course"]["check"], wrong, lang="en")
        assert not full.passed and full.finding.label != call_name(full.finding.label), full.finding
        shown = student_check(full).finding
        for secret in {full.finding.label, full.finding.en, full.finding.expected} - {shown.expected, shown.en, None}:
            squashed = re.sub(r"\s+", "", secret)
            assert len(squashed) < 4 or squashed not in text, (cell.metadata["gpt_course"]["check"], secret)
        assert full.finding.label.split("(")[0] in text  # the function's name stays
    assert "count_targets(5,3)" not in text and "HARVEST" not in text
    for where in (str(ROOT), sys.prefix, "site-packages", "notebook.py", "Traceback (most recent call last)"):
        assert where.replace(" ", "") not in text, where
    # each hidden cell's error is its one line, in the autograded notebook the page is made from
    graded = nbformat.read(folder / "autograded" / "wrong" / "ch05" / "ch05.ipynb", as_version=4)
    errors = [o for c in _test_cells(graded) if "BEGIN HIDDEN TESTS" in c.source for o in c.outputs
              if o.output_type == "error"]
    assert len(errors) >= len(hidden) and all(len(o.traceback) == 1 for o in errors), errors[0].traceback


def test_wrap_line_keeps_every_piece_within_the_width():
    line = "      诊断: " + "展平顺序错了，" * 30 + " expected [([12, 9, 31], [9, 31, 7])] " * 5
    parts = wrap_line(line, 60)
    assert len(parts) > 3 and all(width(p) <= 60 for p in parts)
    assert "".join(p.strip() for p in parts).replace(" ", "") == line.strip().replace(" ", "")
    assert wrap_line("short") == ["short"]


def test_nbgrader_db_needs_an_nbgrader_folder(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "ex01_windows.py").write_text("x = 1\n")
    proc = grade("batch", str(tmp_path), "--out", str(tmp_path / "out"), "--only", "ex01", "--no-progress",
                 "--nbgrader-db", str(tmp_path / "gradebook.db"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def ch05_gradebook(tmp_path_factory) -> Path:
    """An nbgrader gradebook that knows assignment ch05 and no student, made once (nbgrader
    creates a database by running its migrations); a test writes into its own copy."""
    from nbgrader.api import Gradebook

    db = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with pytest.MonkeyPatch.context() as patch:
        alembic_on_path(patch)
        with Gradebook(f"sqlite:///{db}") as gb:
            gb.add_assignment("ch05")
    return db


@pytest.mark.filterwarnings("ignore:Object of type <SubmittedAssignment> not in session")  # nbgrader's own, no notebooks
def test_a_student_id_with_a_backslash_keeps_its_scores(ch05_gradebook, tmp_path, monkeypatch):
    import nbformat
    r"""The batch shows `a\b` as `a\\b` (one text per folder, grader.cohort.students.display_name);
    the nbgrader gradebook still gets the scores of student `a\b`, under that id."""
    from nbgrader.api import Gradebook

    from grader.build.nbgrader_gradebook import write_scores
    from grader.cohort.names import display_name

    handed_in = tmp_path / "submitted" / "a\\b" / "ch05"
    handed_in.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), handed_in / "ch05.ipynb")
    db = Path(shutil.copy(ch05_gradebook, tmp_path / "gradebook.db"))
    alembic_on_path(monkeypatch)
    book = {"students": {display_name("a\\b"): {"score": 3, "exercises": []}}}
    summary = write_scores(book, tmp_path / "submitted", db)
    assert summary["students"] == 1 and summary["submissions"] == 1
    with Gradebook(f"sqlite:///{db}") as gb:
        assert gb.find_submission("ch05", "a\\b").student.id == "a\\b"


@pytest.mark.filterwarnings("ignore:Object of type <SubmittedAssignment> not in session")
def test_the_gradebook_gets_every_student_or_none(ch05_gradebook, tmp_path, monkeypatch):
    """An assignment the gradebook does not know (`CH05`) refuses the write before any student
    is written; a folder name that is not text (the byte 0xFF) is skipped and named, the
    others written."""
    import nbformat
    from nbgrader.api import Gradebook, MissingEntry

    from grader.build.nbgrader_gradebook import write_scores
    from grader.cohort.names import display_name

    odd = os.fsdecode(b"bad\xff")
    for student, assignment in (("alice", "ch05"), (odd, "ch05"), ("zed", "ch05")):
        (tmp_path / "submitted" / student / assignment).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), tmp_path / "submitted" / student / assignment / "ch05.ipynb")
    db = Path(shutil.copy(ch05_gradebook, tmp_path / "gradebook.db"))
    alembic_on_path(monkeypatch)
    book = {"students": {display_name(n): {"score": 3, "exercises": []} for n in ("alice", odd, "zed", "bob")}}
    (tmp_path / "submitted" / "bob" / "CH05").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "submitted" / "bob" / "CH05" / "ch05.ipynb")
    with pytest.raises(click.ClickException, match="CH05"):
        write_scores(book, tmp_path / "submitted", db)
    with Gradebook(f"sqlite:///{db}") as gb:
        with pytest.raises(MissingEntry):
            gb.find_student("alice")  # nothing written
    shutil.rmtree(tmp_path / "submitted" / "bob")
    summary = write_scores(book, tmp_path / "submitted", db)
    assert summary["students"] == 2 and summary["skipped"] == [r"bad\xff"], summary
    with Gradebook(f"sqlite:///{db}") as gb:
        assert {s.id for s in gb.students} == {"alice", "zed"}
