"""`grade nbgrader OUT` end to end with the real nbgrader: generate, autograde, export.

The course folder is built once. `nbgrader generate_assignment` makes the student
versions of both notebooks; students hand in notebooks made from those versions (`solved` both
assignments, `stubs` and `wrong` chapter 5, `raising` the bigram lesson):

- `solved`: every answer cell filled in with the reference: full marks (after the
  instructor grades ex04's written answer through nbgrader's gradebook, as formgrader does);
- `stubs`: the notebooks as released: zero;
- `wrong`: solved, but ex01's functions all return wrong answers: exactly ex01's points lost;
- `raising`: solved, but ex08's answer cell raises before defining anything: exactly ex08's
  points lost, and the later exercises that build on ex08 (ex11, ex12) still graded.

`nbgrader autograde` runs each notebook in a real kernel with nbgrader's database;
`nbgrader export` writes the CSV whose totals are checked. Nothing is mocked.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.model.course import load_course

ROOT = Path(__file__).resolve().parents[2]
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")

NBGRADER = str(Path(sys.executable).parent / "nbgrader")
MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


@pytest.fixture(scope="module")
def course():
    return load_course()


@pytest.fixture(scope="module")
def folder(course, tmp_path_factory) -> Path:
    from grader.build.nbgrader_export import build_nbgrader

    out = tmp_path_factory.mktemp("nbgrader") / "course"
    build_nbgrader(course, out, echo=lambda *_: None)
    return out


def nbgrader(folder: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([NBGRADER, *args], cwd=folder, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "GRADE_LANG": "en",  # nbgrader runs `alembic` from PATH
                               "PATH": os.pathsep.join([str(Path(NBGRADER).parent), os.environ.get("PATH", "")])})
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def cell_points(nb) -> dict[str, int]:
    return {meta(c)["grade_id"]: meta(c)["points"] for c in nb.cells if meta(c).get("grade")}


def exercise_points(nb, exercise_id: str) -> int:
    return sum(p for gid, p in cell_points(nb).items() if gid.startswith(exercise_id + "_"))


def test_layout_and_schema(folder, course):
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


WRONG_EX01 = '''
def shift_pairs(tokens):
    return tokens, tokens


def make_windows(tokens, block_size, stride=1):
    return [(tokens, tokens)]


def count_targets(n_tokens, block_size, stride=1):
    return -1
'''


def submission(release_nb, solutions: dict[str, str], kind: str):
    nb = nbformat.from_dict(release_nb)
    if kind == "stubs":
        return nb
    for cell in nb.cells:
        gid = meta(cell).get("grade_id")
        if meta(cell).get("solution") and gid in solutions:
            cell.source = solutions[gid]
        if kind == "wrong" and gid == "ex01_answer":
            cell.source = WRONG_EX01
        if kind == "raising" and gid == "ex08_answer":
            cell.source = 'raise RuntimeError("学生的单元格出错 / the student\'s cell fails")\n' + cell.source
    return nb


def test_generate_autograde_export(folder, course):
    from nbgrader.api import Gradebook
    from nbgrader.nbgraderformat import MetadataValidator

    # Per assignment, the students whose notebooks show something (each autograde of the bigram
    # notebook trains ex12 for real): a solved one and a stub, one wrong answer, a cell that raises.
    students_of = {"ch05": ("solved", "stubs", "wrong"), "bigram": ("solved", "raising")}
    release, source = {}, {}
    for assignment in ("ch05", "bigram"):
        nbgrader(folder, "generate_assignment", assignment, "--force")
        path = folder / "release" / assignment / f"{assignment}.ipynb"
        release[assignment] = nbformat.read(path, as_version=4)
        source[assignment] = nbformat.read(folder / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        MetadataValidator().validate_nb(release[assignment])
        text = path.read_text(encoding="utf-8")
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
        hidden = [c for c in source[assignment].cells if "BEGIN HIDDEN TESTS" in c.source]
        assert hidden
        for cell in hidden:  # the hidden checks' calls are gone, their cells (and points) stay
            assert re.search(r'run_check\("ex\d\d", "(\w+)"', cell.source).group(0) not in text
        for student in students_of[assignment]:
            nb = submission(release[assignment], solution_sources(source[assignment]), student)
            target = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)

    for assignment in ("ch05", "bigram"):
        nbgrader(folder, "autograde", assignment, "--create", "--force")

    # the instructor grades the written answer (what formgrader does), for the solved student
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        grade = gb.find_grade("ex04_WHY_PARALLEL", "ch05", "ch05", "solved")
        assert grade.auto_score is None and grade.needs_manual_grade
        grade.manual_score = grade.max_score
        gb.db.commit()

    nbgrader(folder, "export", "--to", "grades.csv")
    rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(open(folder / "grades.csv", encoding="utf-8"))}
    full = {a: sum(cell_points(source[a]).values()) for a in ("ch05", "bigram")}
    lost = {("ch05", "wrong"): exercise_points(source["ch05"], "ex01"),
            ("bigram", "raising"): exercise_points(source["bigram"], "ex08")}
    written = cell_points(source["ch05"])["ex04_WHY_PARALLEL"]
    expected = {}
    for assignment in ("ch05", "bigram"):
        for student in students_of[assignment]:
            if student == "stubs":
                expected[assignment, student] = 0
            else:  # the written answer counts only once graded by hand (here: the solved student's)
                ungraded = written if assignment == "ch05" and student != "solved" else 0
                expected[assignment, student] = full[assignment] - ungraded - lost.get((assignment, student), 0)
    got = {key: float(rows[key]["score"]) for key in expected}
    assert got == {k: float(v) for k, v in expected.items()}, (got, expected)
    for key in expected:
        assert float(rows[key]["max_score"]) == full[key[0]]
    assert lost[("ch05", "wrong")] == course.exercise("ex01").points
    assert lost[("bigram", "raising")] == course.exercise("ex08").points


# An answer cell written the way an attacker writes it: the test cells below it call
# `run_check` from the notebook's namespace, so rebinding it (and patching the module, for
# cells that import it again) makes every in-kernel check pass.
CHEAT = '''import grader.notebook


def run_check(*args, **kwargs):
    return None


grader.notebook.run_check = run_check
'''


def export_scores(folder: Path) -> dict[tuple[str, str], float]:
    (folder / "grades.csv").unlink(missing_ok=True)
    nbgrader(folder, "export", "--to", "grades.csv")
    return {(r["assignment"], r["student_id"]): float(r["score"])
            for r in csv.DictReader(open(folder / "grades.csv", encoding="utf-8"))}


def test_batch_writes_the_honest_scores_into_nbgraders_gradebook(course, tmp_path):
    """In nbgrader's own autograde a cell that replaces run_check takes the automatic points;
    `grade batch submitted/ --nbgrader-db gradebook.db` puts the honest scores in their place
    (what `nbgrader export` reads), keeping the grades an instructor gave by hand."""
    from grader.build.nbgrader_export import build_nbgrader
    from nbgrader.api import Gradebook

    folder = tmp_path / "course"
    build_nbgrader(course, folder, echo=lambda *_: None)
    nbgrader(folder, "generate_assignment", "ch05", "--force")
    release = nbformat.read(folder / "release" / "ch05" / "ch05.ipynb", as_version=4)
    source = nbformat.read(folder / "source" / "ch05" / "ch05.ipynb", as_version=4)
    cheater = nbformat.from_dict(release)
    for cell in cheater.cells:
        if meta(cell).get("grade_id") == "ex01_answer":
            cell.source = CHEAT + "\n" + cell.source  # every answer stays a stub
    for student, nb in (("cheater", cheater), ("solved", submission(release, solution_sources(source), "solved"))):
        target = folder / "submitted" / student / "ch05" / "ch05.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, target)
    nbgrader(folder, "autograde", "ch05", "--create", "--force")

    points = cell_points(source)
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

    grade = str(Path(sys.executable).parent / "grade")
    proc = subprocess.run([grade, "batch", str(folder / "submitted"), "--out", str(tmp_path / "out"), "-j", "1",
                           "--only", "ch05", "--no-progress", "--nbgrader-db", str(db)],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "GRADE_LANG": "en"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "manual grades kept" in proc.stdout

    honest = export_scores(folder)
    assert honest[("ch05", "cheater")] == 0.5  # stubs earn nothing; the hand-given half point stays
    assert honest[("ch05", "solved")] == sum(points.values())
    with Gradebook(f"sqlite:///{db}") as gb:
        kept = gb.find_grade("ex01_test_make_windows_course_example", "ch05", "ch05", "cheater")
        assert kept.auto_score == 0 and kept.manual_score == 0.5 and kept.needs_manual_grade
        hidden = gb.find_grade("ex01_test_make_windows_random_strides", "ch05", "ch05", "solved")
        assert hidden.auto_score == points["ex01_test_make_windows_random_strides"] > 0
        assert not hidden.needs_manual_grade


def test_nbgrader_db_needs_an_nbgrader_folder(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "ex01_windows.py").write_text("x = 1\n")
    grade = str(Path(sys.executable).parent / "grade")
    proc = subprocess.run([grade, "batch", str(tmp_path), "--out", str(tmp_path / "out"), "--only", "ex01",
                           "--no-progress", "--nbgrader-db", str(tmp_path / "gradebook.db")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
