"""nbgrader 的测试单元格：通过时只打印报告、不求值；评分单元格有标题；反馈换行。

Real nbgrader on the generated course folder (chapter 5): `generate_assignment`, then
`autograde` of a solved notebook and of one whose ex01 answers are wrong, then
`generate_feedback`. Counted and checked:

- nbgrader's partial-credit warning ("… cannot be converted to a float"), which it logs for
  every test cell whose value is not a number: none in the whole autograde;
- every test cell's outputs: the check's report printed on stdout, no execute_result (a pass
  evaluates to nothing), nothing on stderr (nbgrader scores a cell with stderr output 0);
- the feedback page's score index names each test cell by its check's title (nbgrader's own
  template says "Test cell" for all of them), and the printed reports are wrapped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.model.course import load_course
from grader.notebook import WRAP, wrap_line
from grader.report.layout import width

ROOT = Path(__file__).resolve().parents[2]
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")
NBGRADER = str(Path(sys.executable).parent / "nbgrader")
MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
WARNING = "cannot be converted to"
WRONG_EX01 = '''def shift_pairs(tokens):
    """Wrong on purpose: the targets are the inputs themselves."""
    return list(tokens[:-1]) * 40, list(tokens[:-1]) * 40


def make_windows(tokens, block_size, stride=1):
    return [(list(tokens), list(tokens))] * 30


def count_targets(n_tokens, block_size, stride=1):
    return -1
'''


def nbgrader(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GRADE_LANG": "en",
           "PATH": os.pathsep.join([str(Path(NBGRADER).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run([NBGRADER, *args], cwd=folder, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    from grader.build.nbgrader_export import build_nbgrader

    folder = tmp_path_factory.mktemp("nbcells") / "course"
    build_nbgrader(load_course(), folder, echo=lambda *_: None)
    nbgrader(folder, "generate_assignment", "ch05", "--force")
    source = nbformat.read(folder / "source" / "ch05" / "ch05.ipynb", as_version=4)
    answers = {meta(c)["grade_id"]: "\n".join(l for l in c.source.splitlines() if not MARKER.match(l))
               for c in source.cells if meta(c).get("solution")}
    release = nbformat.read(folder / "release" / "ch05" / "ch05.ipynb", as_version=4)
    for student in ("solved", "wrong"):
        nb = nbformat.from_dict(release)
        for cell in nb.cells:
            gid = meta(cell).get("grade_id")
            if meta(cell).get("solution") and gid in answers:
                cell.source = WRONG_EX01 if (student == "wrong" and gid == "ex01_answer") else answers[gid]
        target = folder / "submitted" / student / "ch05" / "ch05.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, target)
    run = nbgrader(folder, "autograde", "ch05", "--create", "--force")
    feedback = nbgrader(folder, "generate_feedback", "ch05", "--force")
    return {"folder": folder, "log": run.stdout + run.stderr, "source": source,
            "feedback_log": feedback.stdout + feedback.stderr}


def _test_cells(nb):
    return [c for c in nb.cells if meta(c).get("grade") and not meta(c).get("solution") and c.cell_type == "code"]


def test_autograde_logs_no_partial_credit_warning(graded):
    assert "autograd" in graded["log"].lower()  # the log was captured at all
    assert graded["log"].count(WARNING) == 0, [l for l in graded["log"].splitlines() if WARNING in l][:3]


def test_test_cells_print_their_report_and_evaluate_to_nothing(graded):
    for student in ("solved", "wrong"):
        nb = nbformat.read(graded["folder"] / "autograded" / student / "ch05" / "ch05.ipynb", as_version=4)
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


def test_grade_cells_are_titled(graded):
    for cell in _test_cells(graded["source"]):
        title = cell.metadata["gpt_course"]["title"]
        assert title.startswith(meta(cell)["grade_id"].split("_")[0] + " · ") and "|" in title
        assert title in cell.source.splitlines()[0]  # the first comment line names the check


def test_feedback_index_names_the_checks(graded):
    page = (graded["folder"] / "feedback" / "solved" / "ch05" / "ch05.html").read_text(encoding="utf-8")
    toc = page[page.index('<div id="toc">'):page.index("</ol>")]
    assert "Test cell" not in toc
    titles = [c.metadata["gpt_course"]["title"] for c in _test_cells(graded["source"])]
    import html

    assert sum(html.escape(t, quote=False) in toc or t in toc for t in titles) == len(titles)
    graded_cells = [c for c in graded["source"].cells if meta(c).get("grade")]
    possible = sum(meta(c)["points"] for c in graded_cells)
    written = sum(meta(c)["points"] for c in graded_cells if c.cell_type == "markdown")  # ex04, graded by hand
    assert f"(Score: {float(possible - written)} / {float(possible)})" in page  # every automatic point


def test_wrap_line_keeps_every_piece_within_the_width():
    line = "      诊断: " + "展平顺序错了，" * 30 + " expected [([12, 9, 31], [9, 31, 7])] " * 5
    parts = wrap_line(line, 60)
    assert len(parts) > 3 and all(width(p) <= 60 for p in parts)
    assert "".join(p.strip() for p in parts).replace(" ", "") == line.strip().replace(" ", "")
    assert wrap_line("short") == ["short"]
