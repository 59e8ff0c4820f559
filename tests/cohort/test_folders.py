"""每个文件夹恰好一行：怪名字、特殊文件、超大文件、链接、表格注入。

Every folder of a cohort gets exactly one row, keyed by its exact name: names that differ
only by a space, by case, by odd bytes; dot-folders; a FIFO, a socket, a device, a link and an
over-cap file as the exercise file (refused without being opened, with the reason in the
`note` column and in results.json, the student's other files still graded); a link or FIFO
beside the exercise files (relative, absolute, to /proc/self/cwd/solutions, to the kit's
solutions/, a linked sub-folder or data file), never followed or opened, named in the note and
costing nothing; what lies deeper (a link in a nested folder, a FIFO deep inside, a virtual
environment, a folder of 5,000 files), never walked, costing nothing; a folder over the
entry cap where exercises are read from, which refuses the whole submission (every exercise 0,
"submission refused" in the note, in every check's message and in report.html); names that are
formulas, the header or the max row. Unit tests of the keys and cells, then batches: the
hostile cohort in real sandboxes, the rest through the in-process runner double
(tests.runner_double), as what they prove is decided outside the sandbox.
"""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import stat
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.cohort.gradebook import MAX_ROW, grades_csv, recompute, safe_cell
from grader.cohort.names import display_name, student_key
from grader.cohort.students import cohort_layout, find_students, is_nbgrader_dir, not_students
from grader.model.course import load_course
from tests.cohorts import batch_here
from tests.in_process import grade
from tests.kit import EX01, EX02, GRADE, KIT
from tests.processes import alongside

ROOT = os.geteuid() == 0
SOLUTION_EX01 = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
SOLUTION_EX02 = (KIT / "solutions" / EX02).read_text(encoding="utf-8")

names = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=300)


@given(names, names)
def test_keys_are_injective_and_safe(a, b):
    if a in (".", "..") or b in (".", ".."):
        return
    ka, kb = student_key(a), student_key(b)
    assert (ka == kb) == (a == b)
    assert ka.lower() != kb.lower() or a == b  # a case-blind disk keeps them apart too
    assert "/" not in ka and not ka.startswith(".") and len(ka.encode()) < 200


@given(names, names)
@example("\n=1+1", " =1+1")
@example("＝1+1", "\x1b=1")
def test_cells_are_injective_and_never_formulas(a, b):
    ca, cb = safe_cell(a), safe_cell(b)
    assert (ca == cb) == (a == b)
    assert not ca.startswith(("=", "+", "-", "@", "\t", "\r")) and ca not in ("student", MAX_ROW)
    # white space or a control character before a formula, full-width signs: quoted too
    assert not (ca[:1].isspace() or ca[:1] < " " or ca.startswith(("＝", "＋", "－", "＠"))) or not a
    # nothing that reads as the header or the max row on screen (case, width, invisible characters)
    import unicodedata

    seen = "".join(c for c in unicodedata.normalize("NFKC", ca) if unicodedata.category(c) not in ("Cf", "Cc"))
    assert seen.strip().casefold() not in ("student", MAX_ROW) or ca.startswith("'")


@pytest.mark.parametrize("name", ["Student", "student ", "STUDENT", "\u200b(max)", "（max）", "(MAX) ", "\u200bstudent",
                                  # a combining grapheme joiner, a variation selector, a Hangul filler: they draw nothing
                                  "\u034f(max)", "student\u034f", "\u034fstudent", "student\ufe0f", "student\u3164",
                                  # blanks that are symbols (braille, a null notehead), brackets of another shape
                                  "student\u2800", "\u2800(max)", "\U0001d159student", "\u2768max\u2769", "[max]",
                                  # letters of other scripts that draw alike: a Cyrillic ѕ, а and х, a Roman numeral ⅿ
                                  "\u0455tudent", "(m\u0430\u0445)", "\u217fax", "STUD\u0415NT"])
def test_look_alikes_of_the_header_and_max_row_are_quoted(name):
    assert safe_cell(name) == "'" + name


@pytest.mark.parametrize("name", ["0123", "123", "1e2", "100", "1.5", "1.50", "2026-03-04", "3-4", "TRUE", "50%",
                                  "12:30", "5-Jan", "Jan-05", "Mar 5", "$5", "NaN", "inf", "Infinity"])
def test_names_a_spreadsheet_reads_as_values_stay_text(name):
    """`0123` and `123` were one number once a spreadsheet opened grades.csv (two rows "123")."""
    assert safe_cell(name) == "'" + name


@pytest.mark.parametrize("name", ["alice", "Maya", "Marcus", "may", "Jan", "team 7", "2nd", "12 angry men"])
def test_names_that_are_names_stay_as_they_are(name):
    assert safe_cell(name) == name


folder_names = st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\0" not in b)


@given(folder_names, folder_names)
@example(b"\xd5\xc5", rb"\xd5\xc5")
@example(rb"a\b", rb"a\\b")
def test_a_name_is_shown_as_one_text_of_its_own(a, b):
    """Rows and results.json are keyed by the shown name: the GBK bytes d5 c5 and a folder
    literally named "\\xd5\\xc5" must not share one (nor across shards, merged)."""
    shown_a, shown_b = display_name(os.fsdecode(a)), display_name(os.fsdecode(b))
    assert (shown_a == shown_b) == (a == b)
    assert shown_a.encode("utf-8")  # always text a CSV, JSON and a page can hold


def test_odd_bytes_and_case_keep_their_own_keys():
    odd = os.fsdecode(b"caf\xe9")
    keys = {student_key(n) for n in ("alice smith", "alice_smith", "Alice", "alice", odd, "café", ".alice")}
    assert len(keys) == 7


def test_a_students_linked_folder_does_not_make_a_cohort_nbgrader(tmp_path):
    """Only what the student made is looked at: a linked assignment folder is not listed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "ch05.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "cohort" / "alice").mkdir(parents=True)
    os.symlink(elsewhere, tmp_path / "cohort" / "alice" / "ch05")
    assert not is_nbgrader_dir(tmp_path / "cohort")
    (tmp_path / "cohort" / "bob" / "ch05").mkdir(parents=True)
    (tmp_path / "cohort" / "bob" / "ch05" / "ch05.ipynb").write_text("{}", encoding="utf-8")
    assert is_nbgrader_dir(tmp_path / "cohort")


def test_one_students_notebooks_do_not_make_a_cohort_of_files_nbgrader(tmp_path):
    """A stray notebook (a sub-folder's, Jupyter's `.ipynb_checkpoints`) or a student named
    `submitted` leaves a cohort of `.py` files as it is: every student keeps their row."""
    cohort = tmp_path / "cohort"
    for name in ("alice", "bob", "submitted"):
        (cohort / name).mkdir(parents=True)
        (cohort / name / "ex01_windows.py").write_text("", encoding="utf-8")
    (cohort / "alice" / "notes").mkdir()
    (cohort / "alice" / "notes" / "play.ipynb").write_text("{}", encoding="utf-8")
    (cohort / "submitted" / ".ipynb_checkpoints").mkdir()
    (cohort / "submitted" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    (cohort / "carol" / ".ipynb_checkpoints").mkdir(parents=True)
    (cohort / "carol" / ".ipynb_checkpoints" / "ch05-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    assert cohort_layout(cohort) == (cohort, False) and not_students(cohort) == []
    # an nbgrader course folder: its submitted/ holds the students
    course_folder = tmp_path / "course"
    (course_folder / "submitted" / "alice" / "ch05").mkdir(parents=True)
    (course_folder / "submitted" / "alice" / "ch05" / "ch05.ipynb").write_text("{}", encoding="utf-8")
    assert cohort_layout(course_folder)[0] == course_folder  # nothing of a course folder: a student named so
    for marks in (["source/ch05"], ["nbgrader_config.py"], ["gradebook.db"]):  # its config may be in ~/.jupyter
        made = course_folder / marks[0]
        made.mkdir(parents=True) if "." not in made.name else made.write_text("", encoding="utf-8")
        assert cohort_layout(course_folder) == (course_folder / "submitted", True), marks
        shutil.rmtree(course_folder / "source") if made.is_dir() else made.unlink()


def test_a_student_named_submitted_never_takes_over_a_notebook_cohort(tmp_path):
    """Three notebook students and one folder named `submitted` holding its own sub-folders:
    not an nbgrader course folder (no nbgrader_config.py), so every folder keeps its row."""
    cohort = tmp_path / "cohort"
    for name in ("nb1", "nb2", "nb3", "submitted/nb1", "submitted/ghost"):
        (cohort / name / "ch05").mkdir(parents=True)
        (cohort / name / "ch05" / "ch05.ipynb").write_text("{}", encoding="utf-8")
    assert cohort_layout(cohort) == (cohort, True)


def test_an_edited_state_is_recomputed_from_its_checks():
    result = {"score": 99, "max_score": 4, "exercises": [
        {"id": "ex01", "score": 99, "max_score": 4, "checks": [
            {"name": "a", "passed": True, "score": 3, "max_score": 1},
            {"name": "b", "passed": False, "score": 3, "max_score": 3}]}]}
    fixed = recompute(result, ["ex01"])
    assert fixed["score"] == fixed["exercises"][0]["score"] == 1 and fixed["max_score"] == 4
    assert recompute(result, ["ex01", "ex02"]) is None  # not a result of what is graded
    assert recompute({"exercises": [{"id": "ex01", "checks": [{"passed": "yes", "max_score": 1}]}]}, ["ex01"]) is None


def test_the_max_row_and_header_cannot_be_forged():
    book = {"exercises": [{"id": "ex01", "max_score": 10}], "students": {
        "(max)": {"score": 0, "max_score": 10, "exercises": [{"id": "ex01", "score": 0}], "note": ""},
        "student": {"score": 0, "max_score": 10, "exercises": [{"id": "ex01", "score": 0}], "note": ""},
        '=HYPERLINK("http:evil","10")': {"score": 0, "max_score": 10, "exercises": [{"id": "ex01", "score": 0}],
                                         "note": "=1+1"},
        # a bare CR: unquoted, a reader would end the row there and start one at "(max)" or "=…"
        "x\r(max)": {"score": 0, "max_score": 10, "exercises": [{"id": "ex01", "score": 0}], "note": "n\r=1+1"},
        "\r=cr": {"score": 0, "max_score": 10, "exercises": [{"id": "ex01", "score": 0}], "note": ""}}}
    rows = list(csv.reader(io.StringIO(grades_csv(book), newline="")))
    assert len(rows) == 2 + len(book["students"])
    assert [r[0] for r in rows].count("(max)") == 1 and [r[0] for r in rows].count("student") == 1
    assert all(not r[0].startswith("=") and not r[-2].startswith("=") for r in rows[2:])


def _linked_layouts(root: Path) -> dict[str, tuple[Path, str]]:
    """Student folder name -> (the link to make, where it points): links an intake never follows.

    The folders are made (empty, or with `exercises/`) here; the student's own files beside
    the link are written by the caller for the names that are not `exercises` links."""
    layouts = {}
    for name, target in (("relative", None), ("absolute", str(KIT / "solutions")),
                         ("proc cwd", "/proc/self/cwd/solutions")):
        folder = root / name
        folder.mkdir(parents=True)
        target = target or os.path.relpath(KIT / "solutions", folder)  # ../../…/solutions
        layouts[name] = (folder / "exercises", target)
    layouts["linked sub-folder"] = (root / "linked sub-folder" / "reference", str(KIT / "solutions"))
    layouts["linked data file"] = (root / "linked data file" / "notes.txt", str(KIT / "solutions" / EX01))
    nested = root / "nested"
    (nested / "exercises" / "data").mkdir(parents=True)
    for name, text in ((EX01, SOLUTION_EX01), (EX02, SOLUTION_EX02)):
        (nested / "exercises" / name).write_text(text, encoding="utf-8")
    layouts["nested"] = (nested / "exercises" / "data" / "answer.py", str(KIT / "solutions" / EX01))
    return layouts


def _special_cohort(root: Path, out: Path) -> dict[str, str]:
    """Folder name -> what it holds; the expectations are in test_every_folder_one_row (OUT: the
    batch's output folder, made here, which a student folder links to)."""
    made = {}

    def student(name: str, ex01: str | None = SOLUTION_EX01, ex02: str | None = SOLUTION_EX02) -> Path:
        folder = root / (os.fsdecode(name) if isinstance(name, bytes) else name)
        folder.mkdir(parents=True, exist_ok=True)
        if ex01 is not None:
            (folder / EX01).write_text(ex01, encoding="utf-8")
        if ex02 is not None:
            (folder / EX02).write_text(ex02, encoding="utf-8")
        made[os.fsdecode(name) if isinstance(name, bytes) else name] = "full"
        return folder

    for name in ("alice smith", "alice_smith", "Alice", "alice", ".hidden", '=HYPERLINK("http:evil","10")',
                 "(max)", "student", "-2+3", "new\nline", "x\r(max)", "\r=cr", "\\xd5\\xc5"):
        student(name)
    student(b"caf\xe9")
    student(b"\xd5\xc5")  # GBK bytes, and above a folder literally named so: two rows
    split = student("split", ex01=None)  # ex01 in exercises/, ex02 beside it: only exercises/ is read
    (split / "exercises").mkdir()
    (split / "exercises" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    made["split"] = "split"
    linky = student("many links")  # a note names ten, then says how many more
    for i in range(15):
        os.symlink("/nowhere", linky / f"link{i:02}")
    made["many links"] = "full, noted"
    out.mkdir(parents=True, exist_ok=True)
    os.symlink(out, root / "to out")  # other students' staged files, the gradebook: never a submission
    made["to out"] = "out link"
    fifo = student("fifo", ex01=None)
    os.mkfifo(fifo / EX01)
    made["fifo"] = "ex01 refused"
    sock = student("sock", ex01=None)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock / EX01))
    server.close()
    made["sock"] = "ex01 refused"
    if ROOT:
        dev = student("device", ex01=None)
        os.mknod(dev / EX01, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
        made["device"] = "ex01 refused"
    big = student("huge", ex01=None)
    with open(big / EX01, "wb") as handle:  # 50 MB, sparse: sorted before ex02, which must still count
        handle.truncate(50 * 1024 * 1024)
    made["huge"] = "ex01 refused"
    link = student("link", ex01=None)
    (link / EX01).symlink_to(KIT / "solutions" / EX01)
    made["link"] = "ex01 refused"
    student("empty", ex01=None, ex02=None)
    made["empty"] = "nothing"
    for name, (where, target) in _linked_layouts(root).items():
        if name not in made:
            student(name)
        os.symlink(target, where)
        made[name] = "full, noted"  # nested: exercises/data is not walked; the copies beside exercises/ noted
    deep = student("deep fifo")
    (deep / "data" / "more").mkdir(parents=True)
    os.mkfifo(deep / "data" / "more" / "pipe")
    os.mkfifo(student("fifo beside") / "notes")
    made["fifo beside"] = "full, noted"
    venv = student("venv")  # a virtual environment beside the work: links, and more files than the cap
    (venv / ".venv" / "bin").mkdir(parents=True)
    os.symlink("/usr/bin/python3", venv / ".venv" / "bin" / "python")
    for i in range(5000):
        (venv / ".venv" / f"f{i}").touch()
    crowded = student("crowded")  # more entries than the cap where exercises are read from
    for i in range(4000):
        (crowded / f"n{i}").touch()
    made["crowded"] = "refused"
    (root / "roster.csv").write_text("not a student\n", encoding="utf-8")  # a file, not a folder
    return made


@pytest.fixture(scope="module")
def special(tmp_path_factory):
    """`_special_cohort` made once (its 9,000 files are costly to write) for the tests that read
    it, neither changing it: its folder, the OUT one of its folders links to (graded into by
    test_every_folder_one_row), and what each folder holds."""
    tmp = tmp_path_factory.mktemp("special")
    made = _special_cohort(tmp / "cohort", tmp / "out")
    return tmp / "cohort", tmp / "out", made


def test_find_students_never_opens_a_special_file(course, special, tmp_path):
    cohort, out, made = special
    started = time.monotonic()
    found = find_students(cohort, load_course(course), tmp_path / "staged", skip=(out,))
    assert time.monotonic() - started < 10  # a FIFO opened for reading would block forever
    assert sorted(s.name for s in found) == sorted(display_name(n) for n in made)
    assert len(found) == len(made)  # one text per name: the GBK folder and the one named "\\xd5\\xc5" apart
    by_name = {s.name: s for s in found}
    assert by_name["fifo"].present == {"ex02"} and by_name["fifo"].problems[0]["reason"] == "special"
    assert by_name["huge"].problems[0]["reason"] == "too_large" and by_name["huge"].present == {"ex02"}
    assert by_name["link"].problems[0]["reason"] == "link"
    assert by_name["empty"].problems[0]["reason"] == "no_exercise_files"
    assert not (tmp_path / "staged" / by_name["huge"].key / EX01).exists()
    for name in [n for n, kind in made.items() if kind == "refused"]:
        student = by_name[name]
        assert student.present == frozenset() and len(student.problems) == 1, (name, student.problems)
        assert student.problems[0]["reason"] == "refused", (name, student.problems)
        assert "submission refused" in student.problems[0]["en"] and "提交被拒绝" in student.problems[0]["zh"]
        assert "too many entries" in student.problems[0]["en"], name
        assert set(student.refused) == {EX01, EX02}  # every exercise says why it scored 0
        assert list((tmp_path / "staged" / student.key).iterdir()) == [], name  # nothing staged
    for name, kind in made.items():
        student = by_name.get(display_name(name))
        if kind.startswith("full"):  # every exercise read; what was not read is only named
            assert student.present == {"ex01", "ex02"} and not student.refused, (name, student.problems)
            assert bool(student.problems) == (kind == "full, noted"), (name, student.problems)
            assert all(p["unread"] and p["reason"] in ("link", "special", "beside_inner") for p in student.problems), name
    assert [p["file"] for p in by_name["relative"].problems] == ["exercises"]
    assert [p["file"] for p in by_name["linked data file"].problems] == ["notes.txt"]
    assert [p["reason"] for p in by_name["fifo beside"].problems] == ["special"]
    assert [(p["file"], p["reason"]) for p in by_name["nested"].problems] == [(EX01, "beside_inner"), (EX02, "beside_inner")]
    assert by_name["split"].present == {"ex01"}  # read from exercises/ alone; the one beside it named
    assert [(p["file"], p["reason"]) for p in by_name["split"].problems] == [(EX02, "beside_inner")]
    assert [p["reason"] for p in by_name["to out"].problems] == ["kit_link"] and not by_name["to out"].present


def test_every_folder_one_row(course, special):
    cohort, out, made = special
    run = batch_here(course, cohort, out)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"{len(made)} " in run.stdout  # the summary counts every folder
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    shown = {display_name(n): kind for n, kind in made.items()}
    assert set(book["students"]) == set(shown)
    full = max(s["max_score"] for s in book["students"].values())
    ex02_max = book["exercises"][1]["max_score"]
    for name, kind in shown.items():
        entry = book["students"][name]
        scores = {e["id"]: e["score"] for e in entry["exercises"]}
        if kind == "full":
            assert entry["score"] == full and not entry["note"], (name, entry["note"])
        elif kind == "full, noted":  # the link or FIFO beside the files: named, not read, no point lost
            assert entry["score"] == full and ("未读取" in entry["note"]), (name, entry["note"])
        elif kind == "ex01 refused":
            assert scores == {"ex01": 0, "ex02": ex02_max}, name
            assert EX01 in entry["note"], (name, entry["note"])
        elif kind == "refused":  # the whole submission: 0, and each check says why
            assert entry["score"] == 0 and "提交被拒绝" in entry["note"], (name, entry["note"])  # the batch's zh
            told = [any("提交被拒绝" in c["message"] for c in e["checks"]) for e in entry["exercises"]]
            assert told and all(told), (name, entry["exercises"])  # each exercise says it (once)
        elif kind == "split":
            assert scores["ex01"] > 0 and scores["ex02"] == 0 and f"{EX02}: 未读取" in entry["note"], entry["note"]
        else:
            assert entry["score"] == 0 and entry["note"], name
    assert book["students"]["many links"]["note"].endswith("另有 5 项")  # ten named, then a count
    with (out / "grades.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 2 + len(made)  # a "\r" in a name or a note does not end its row
    assert sorted(r[0] for r in rows[2:]) == sorted(safe_cell(n) for n in shown)
    note = rows[0].index("note")
    assert {r[0] for r in rows[2:] if "提交被拒绝" in r[note]} == \
        {n for n, kind in shown.items() if kind in ("refused", "out link")}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="refused"' in page and "crowded" in page and "exercises: 是符号链接，未读取" in page
    assert [r[0] for r in rows].count("(max)") == 1 and [r[0] for r in rows].count("student") == 1
    assert not any(r[0].startswith(("=", "+", "-", "@")) for r in rows[2:])

    again = batch_here(course, cohort, out)  # resumed: the same book, nothing regraded
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((out / "results.json").read_text(encoding="utf-8")) == book


def test_out_is_checked_before_grading(course, tmp_path, monkeypatch, in_process_runner):
    folder = tmp_path / "cohort"
    (folder / "s").mkdir(parents=True)
    (folder / "s" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    # a file; below one; the submissions folder; a student's folder (its row would be lost) or inside one
    for out in (afile, afile / "below", folder, folder / "s", folder / "s" / "out"):
        run = batch_here(course, folder, out)
        assert run.returncode == 2 and "Traceback" not in run.stderr, (out, run.stderr)
    assert sorted(p.name for p in (folder / "s").iterdir()) == [EX01]  # nothing written into it
    for _ in range(2):  # a new folder in DIR is not a student's: graded into, then resumed
        run = batch_here(course, folder, folder / "_out")
        assert run.returncode == 0, run.stderr[-2000:]
        assert list(json.loads((folder / "_out" / "results.json").read_text(encoding="utf-8"))["students"]) == ["s"]
    # a student who hands in OUT's two files (a cohort file naming DIR, a forged seal) and no
    # exercise, and a copy of the real OUT (its seal is for where it was): folders, each a row
    (folder / "t").mkdir()
    (folder / "t" / "cohort.json").write_text(json.dumps({"cohort": str(folder.resolve()), "seal": "0" * 64}),
                                              encoding="utf-8")
    (folder / "t" / ".grade-batch.lock").write_text("", encoding="utf-8")
    shutil.copytree(folder / "_out", folder / "u")
    empty = tmp_path / "empty"
    empty.mkdir()
    run = batch_here(course, folder, empty)  # an empty folder is a new gradebook's
    # that OUT in DIR is no student of a run elsewhere, and it alone is passed over
    assert run.returncode == 0 and "another grade batch's OUT" in run.stderr and "_out" in run.stderr, run.stderr
    assert "not a student, not graded: _out\n" in run.stderr, run.stderr
    rows = json.loads((empty / "results.json").read_text(encoding="utf-8"))["students"]
    assert sorted(rows) == ["s", "t", "u"], sorted(rows)
    assert rows["t"]["score"] == 0 and "没有练习文件" in rows["t"]["note"], rows["t"]
    shutil.rmtree(folder / "t")
    shutil.rmtree(folder / "u")
    # a student's folder dressed as OUT: a cohort file of its own, even one naming DIR
    (folder / "s" / "cohort.json").write_text(json.dumps({"cohort": str(folder.resolve())}), encoding="utf-8")
    run = batch_here(course, folder, folder / "s")
    assert run.returncode == 2 and "student's folder" in run.stderr, run.stderr
    # an existing folder that is not empty and holds no gradebook: the kit's solutions/, the
    # working folder (`--out ""`), a home folder
    run = batch_here(course, folder, afile.parent)
    assert run.returncode == 2 and "not empty" in run.stderr and "Traceback" not in run.stderr, run.stderr
    for out in (KIT / "solutions", KIT / "solutions" / "new", KIT / "grader" / "per_exercise" / "new"):  # the kit's own
        run = batch_here(course, folder, out)
        assert run.returncode == 2 and "kit's own folders" in run.stderr and not (KIT / "solutions" / "new").exists()
    monkeypatch.chdir(tmp_path)
    run = batch_here(course, folder, "")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    (empty / "students").rename(empty / "elsewhere")  # a folder OUT writes into, not one it can write
    (empty / "students").symlink_to(empty / "elsewhere")
    run = batch_here(course, folder, empty)
    assert run.returncode == 2 and "students" in run.stderr and "cannot be written" in run.stderr, run.stderr
    (empty / "students").unlink()
    (empty / "elsewhere").rename(empty / "students")
    if not ROOT:  # a mode: said before grading, not as each student's state fails to be written
        (empty / "students").chmod(0o555)
        run = batch_here(course, folder, empty)
        (empty / "students").chmod(0o755)
        assert run.returncode == 2 and "students" in run.stderr, run.stderr
    for inside in (empty / "again", empty / "staged" / "again"):  # inside that batch's OUT: refused
        run = batch_here(course, folder, inside)
        assert run.returncode == 2 and "inside another grade batch's OUT" in run.stderr, run.stderr
        assert not inside.exists()
    if not ROOT:
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o500)
        run = batch_here(course, folder, locked / "out")
        assert run.returncode == 2 and "Traceback" not in run.stderr


def test_a_second_batch_on_the_same_out_is_refused(course, tmp_path, in_process_runner):
    folder = tmp_path / "cohort"
    (folder / "s").mkdir(parents=True)  # graded for three seconds at least: the second batch comes meanwhile
    (folder / "s" / EX01).write_text("import time\ntime.sleep(3)\n" + SOLUTION_EX01, encoding="utf-8")

    tried = []

    def second_batch() -> None:  # a process of its own, while the first (in this process) holds OUT
        deadline = time.monotonic() + 60
        while not (tmp_path / "out" / ".grade-batch.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        tried.append(subprocess.run(GRADE + ["--course", str(course), "batch", str(folder), "--out",
                                             str(tmp_path / "out"), "--no-progress", "-j", "1"],
                                    capture_output=True, text=True, timeout=300))

    with alongside(second_batch):
        first = batch_here(course, folder, tmp_path / "out")
    assert first.returncode == 0, first.stderr[-2000:]
    (second,) = tried
    assert second.returncode == 2 and "in use" in second.stderr and "Traceback" not in second.stderr

    other = tmp_path / "other"
    (other / "z").mkdir(parents=True)
    (other / "z" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    third = batch_here(course, other, tmp_path / "out")  # another cohort on this OUT
    assert third.returncode == 2 and "another cohort" in third.stderr


def test_an_edited_state_file_does_not_reach_the_gradebook(course, tmp_path, in_process_runner):
    folder = tmp_path / "cohort"
    (folder / "s").mkdir(parents=True)
    (folder / "s" / EX01).write_text((KIT / "exercises" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    assert batch_here(course, folder, tmp_path / "out").returncode == 0
    state_file = next((tmp_path / "out" / "students").glob("*.json"))
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["result"]["score"] = 999
    state["result"]["exercises"][0]["score"] = 999
    state_file.write_text(json.dumps(state), encoding="utf-8")
    assert batch_here(course, folder, tmp_path / "out").returncode == 0
    book = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert book["students"]["s"]["score"] == 0


def test_memory_does_not_grow_with_file_sizes(course, tmp_path):
    """A sparse 2 GiB .py file (and a 2 GiB notebook-sized file beside it) costs no memory."""
    folder = tmp_path / "cohort" / "big"
    folder.mkdir(parents=True)
    (folder / EX02).write_text(SOLUTION_EX02, encoding="utf-8")
    for name in (EX01, "helper.py"):
        with open(folder / name, "wb") as handle:
            handle.truncate(2 * 1024**3)
    peak_kb, found = _find_students_apart(tmp_path / "cohort", course, tmp_path / "st")
    assert list(found) == ["big"] and found["big"][0] == ["ex02"]
    assert peak_kb < 200 * 1024, f"peak {peak_kb // 1024} MB"


def _find_students_apart(cohort: Path, course: Path, staged: Path) -> tuple[int, dict]:
    """`find_students` in a fresh process: its peak memory (kB) and, per student, the
    exercises present and the reasons of its problems."""
    script = ("import json, sys; from pathlib import Path; from grader.model.course import load_course; "
              "from grader.cohort.students import find_students; "
              "s = find_students(Path(sys.argv[1]), load_course(Path(sys.argv[2])), Path(sys.argv[3])); "
              "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]; "
              "print(json.dumps([int(hwm), {x.name: [sorted(x.present), [p['reason'] for p in x.problems]] "
              "for x in s}]))")
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forked copy of this (large,
    # torch-holding) test process across exec, so it would measure pytest, not the script.
    run = subprocess.run([os.sys.executable, "-c", script, str(cohort), str(course), str(staged)],
                         capture_output=True, text=True, timeout=300, cwd=KIT, check=False)
    assert run.returncode == 0, run.stderr
    peak_kb, found = json.loads(run.stdout)
    return peak_kb, found


def test_a_notebook_is_parsed_apart_from_the_batch(course, tmp_path):
    """A 30 MB notebook of ten million empty lists (about 700 MB as Python objects) and a 12 MB
    one of four million: the batch's process never holds them (a child with capped memory
    parses each and sends back the code cells). The smaller is graded; the larger is more than
    the child may take and counts as unreadable; the honest one beside them is unaffected. Code
    over a .py file's cap, extracted from a notebook (however many notebooks add to it, in
    however many pieces), is refused as that file would be, and said; it is never held whole."""
    cell = {"cell_type": "code", "execution_count": None, "outputs": [], "source": SOLUTION_EX01,
            "metadata": {"nbgrader": {"grade_id": "ex01_answer", "solution": True, "grade": False}}}
    huge = {**cell, "source": SOLUTION_EX01 + "# padding\n" * 300_000}  # 3 MB of code: over a .py file's cap
    pieces = {**cell, "source": [SOLUTION_EX01] + ["ab"] * 4_000_000}  # 24 MB as four million strings
    for student, junk in (("ann", 0), ("cat", 4_000_000), ("dan", 10_000_000), ("eve", 0), ("fay", 0)):
        folder = tmp_path / "submitted" / student / "ch05"
        folder.mkdir(parents=True)
        text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                           "cells": [{"eve": huge, "fay": pieces}.get(student, cell)]}).encode()
        (folder / "ch05.ipynb").write_bytes(text[:-1] + b', "junk": [' + b"[]," * junk + b"[]]}")
    for n in range(8):  # 1.2 MB of ex01 code in each of eight notebooks: each under the cap, not together
        folder = tmp_path / "submitted" / "gus" / f"part{n}"
        folder.mkdir(parents=True)
        part = {**cell, "source": SOLUTION_EX01 + "# padding\n" * 120_000}
        (folder / "ch05.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                       "cells": [part]}), encoding="utf-8")
    peak_kb, found = _find_students_apart(tmp_path / "submitted", course, tmp_path / "st")
    assert found == {"ann": [["ex01"], []], "cat": [["ex01"], []], "dan": [[], ["no_notebooks"]],
                     "eve": [[], ["too_large"]], "fay": [[], ["too_large"]], "gus": [[], ["too_large"]]}, found
    assert peak_kb < 200 * 1024, f"peak {peak_kb // 1024} MB"


def test_a_student_folder_linked_into_proc_is_refused_however_written(course, tmp_path, monkeypatch):
    """`../../proc/self/cwd` is the grader's working folder, whatever it holds: never a submission."""
    cwd = tmp_path / "graders cwd"
    cwd.mkdir()
    (cwd / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    monkeypatch.chdir(cwd)
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    os.symlink(os.path.relpath("/proc/self/cwd", cohort), cohort / "relative")
    os.symlink("/proc/self/cwd", cohort / "absolute")
    # through links of its own: a chain, and a link to a folder that is a link into /proc
    hops = tmp_path / "hops"
    hops.mkdir()
    os.symlink(os.path.relpath("/proc/self", hops), hops / "me")
    os.symlink(os.path.relpath("/proc/self/cwd", hops), hops / "there")
    os.symlink(hops / "there", cohort / "chain")
    os.symlink(os.path.relpath(hops / "me", cohort) + "/cwd", cohort / "via a folder")
    found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    for name in ("relative", "absolute", "chain", "via a folder"):
        assert not found[name].present and found[name].problems[0]["reason"] == "kit_link", found[name]


def test_a_student_folder_linked_nowhere_keeps_its_row(course, tmp_path):
    """A link to a student's folder that is gone, or links that loop: a row each, with why."""
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    os.symlink(tmp_path / "moved away", cohort / "gone")
    os.symlink("loop b", cohort / "loop a")
    os.symlink("loop a", cohort / "loop b")
    (cohort / "notes.txt").write_text("a file beside the folders is no student", encoding="utf-8")
    found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    assert sorted(found) == ["gone", "loop a", "loop b"]
    assert not_students(cohort) == ["notes.txt"]  # said by the batch (a bob.zip never unpacked)
    for student in found.values():
        assert not student.present and student.problems[0]["reason"] == "dead_link", student


def test_names_a_batch_looks_for_cannot_stop_it(course, tmp_path, in_process_runner):
    """OUT's lock name as a link to a name too long, a `submitted` link to one, a folder that
    cannot be searched (as an ordinary user, the batch's: 0o000 here, root's own elsewhere):
    each a row, the others graded, never the whole batch stopped."""
    cohort = tmp_path / "cohort"
    for name in ("ok", "longlock", "shut"):
        (cohort / name).mkdir(parents=True)
        (cohort / name / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    os.symlink("x" * 300, cohort / "longlock" / ".grade-batch.lock")
    os.symlink("y" * 300, cohort / "submitted")
    os.chmod(cohort / "shut", 0)
    try:
        run = batch_here(course, cohort, tmp_path / "out", "--only", "ex01")
    finally:
        os.chmod(cohort / "shut", 0o755)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr[-2000:]
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))}
    assert sorted(rows) == ["(max)", "longlock", "ok", "shut", "submitted"], rows
    assert rows["ok"]["ex01"] == rows["longlock"]["ex01"] == rows["(max)"]["ex01"]
    assert rows["submitted"]["note"] and rows["submitted"]["ex01"] == "0"


def test_a_folder_swapped_for_a_link_after_the_listing_never_stages_the_kit(course, tmp_path, monkeypatch):
    """A folder listed as a folder, then swapped for a link to the kit's solutions/ before it
    is read (someone writing into DIR during the batch): what is checked is what is read, so
    it is refused, and no reference file is staged as that student's."""
    import grader.cohort.students as students_module

    cohort = tmp_path / "cohort"
    (cohort / "race").mkdir(parents=True)
    (cohort / "race" / EX01).write_text("X = 1\n", encoding="utf-8")
    listed = students_module._scan

    def scan_then_swap(folder):
        entries = listed(folder)
        if sys._getframe(1).f_code.co_name == "find_students" and not (cohort / "race").is_symlink():
            (cohort / "race").rename(tmp_path / "away")
            os.symlink(KIT / "solutions", cohort / "race")
        return entries

    monkeypatch.setattr(students_module, "_scan", scan_then_swap)
    found = find_students(cohort, load_course(course), tmp_path / "staged")
    assert [s.name for s in found] == ["race"] and not found[0].present, found
    assert not list((tmp_path / "staged").rglob("*.py")), list((tmp_path / "staged").rglob("*"))


@pytest.mark.parametrize("inside", ["folder", "scratch", "link", "fifo"])
def test_an_exercises_folder_with_nothing_of_the_course_hides_nothing(course, tmp_path, inside):
    """Work at the top of a student's folder beside an `exercises/` holding only a folder named
    like an exercise, an `ex99_scratch.py`, a link or a FIFO: the top is read, in `grade batch`
    and in a single run (`--submission`) alike."""
    from grader.run.grading import inner_exercises

    student = tmp_path / "cohort" / "s"
    (student / "exercises").mkdir(parents=True)
    (student / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    made = {"folder": lambda p: p.joinpath(EX02).mkdir(), "scratch": lambda p: p.joinpath("ex99_scratch.py").write_text(""),
            "link": lambda p: p.joinpath(EX01).symlink_to(student / EX01), "fifo": lambda p: os.mkfifo(p / EX02)}
    made[inside](student / "exercises")
    loaded = load_course(course)
    found = find_students(tmp_path / "cohort", loaded, tmp_path / "staged")
    assert found[0].present == {"ex01"}, found[0]
    assert inner_exercises(student, loaded) == student
    (student / "exercises" / "ex02_nll.py.tmp").write_text("")
    if inside in ("folder", "fifo"):
        (student / "exercises" / EX02).rmdir() if inside == "folder" else (student / "exercises" / EX02).unlink()
    (student / "exercises" / EX02).write_text(SOLUTION_EX02, encoding="utf-8")  # a course file there: exercises/ it is
    assert inner_exercises(student, loaded) == student / "exercises"
    assert find_students(tmp_path / "cohort", loaded, tmp_path / "staged2")[0].present == {"ex02"}


def test_two_links_to_one_folder_outside_are_graded_once(course, tmp_path):
    """An instructor's links to students' folders elsewhere are followed; two links to the same
    folder: the first graded, the second its peer (one student's work never gets two rows)."""
    (tmp_path / "elsewhere" / "carol").mkdir(parents=True)
    (tmp_path / "elsewhere" / "carol" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    os.symlink(tmp_path / "elsewhere" / "carol", cohort / "link1")
    os.symlink(tmp_path / "elsewhere" / "carol", cohort / "link2")
    found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    assert found["link1"].present == {"ex01"} and not found["link1"].problems
    assert found["link2"].problems[0]["reason"] == "peer_link" and found["link2"].problems[0]["peer"] == "link1"


def test_a_student_folder_linked_to_another_students_work_is_refused(course, tmp_path):
    """A link to a peer's folder (or into it), to DIR itself, or into another batch's OUT is not
    that student's work; a link out of DIR, to a folder no other entry is, is graded."""
    cohort = tmp_path / "cohort"
    for name in ("alice", "exercises"):
        (cohort / name).mkdir(parents=True)
        (cohort / name / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    other_out = tmp_path / "last term" / "out"  # another batch's OUT: its staged copies
    (other_out / "staged" / "alice~1").mkdir(parents=True)
    (other_out / "staged" / "alice~1" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    (other_out / "cohort.json").write_text("{}", encoding="utf-8")
    (other_out / ".grade-batch.lock").write_text("", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    os.symlink("alice", cohort / "peer")
    os.symlink("alice/", cohort / "peer slash")
    os.symlink(".", cohort / "itself")
    os.symlink("..", cohort / "above")
    os.symlink(other_out / "staged" / "alice~1", cohort / "last term's alice")
    os.symlink(tmp_path / "elsewhere", cohort / "carol")
    found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    reasons = {name: s.problems[0]["reason"] if s.problems else None for name, s in found.items()}
    assert reasons == {"alice": None, "exercises": None, "carol": None, "peer": "peer_link", "peer slash": "peer_link",
                       "itself": "dir_link", "above": "dir_link", "last term's alice": "kit_link"}
    assert found["peer"].problems[0]["peer"] == "alice" and not found["peer"].present
    assert found["carol"].present == {"ex01"}


def test_a_write_killed_mid_way_leaves_no_temporary_file_after_the_next_run(tmp_path):
    """kill -9 during an atomic write leaves `.name.<pid>.tmp` (600 KB for results.json); the
    next run that holds OUT takes it away."""
    from grader.cohort.gradebook import hold_out

    out = tmp_path / "out"
    stale = [out / ".results.json.4242.tmp", out / "students" / ".s~1.json.4242.tmp",
             out / "reports" / ".s~1.json.4242.tmp", out / "staged" / "s~1" / ".ex01_windows.py.4242.tmp",
             out / "cache" / "answers" / ".0123abcd.4242.tmp"]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half", encoding="utf-8")
    (out / "students" / "s~1.json").write_text("{}", encoding="utf-8")
    with hold_out(out):
        assert not any(path.exists() for path in stale)
    assert (out / "students" / "s~1.json").exists()


def test_staged_files_removed_under_a_run_are_not_the_students_result(course, tmp_path, in_process_runner):
    """OUT/staged is the batch's own copy (no worker reaches it). Removed while the student is
    graded, the student is not saved as 'missing': the gradebook is refused with a message,
    and the same command again grades them in full."""
    folder, out = tmp_path / "cohort", tmp_path / "out"
    (folder / "slow").mkdir(parents=True)
    (folder / "slow" / EX01).write_text("import time\ntime.sleep(5)\n" + SOLUTION_EX01, encoding="utf-8")
    staged = out / "staged" / student_key("slow")

    def remove_staged() -> None:  # beside the batch, which runs in this process
        deadline = time.monotonic() + 120
        while not (staged / EX01).is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the student is being graded from here for 3 s at least (the import sleeps past the limit)
        shutil.rmtree(staged)

    with alongside(remove_staged):
        run = batch_here(course, folder, out)
    assert run.returncode == 3 and "no result was written" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (out / "grades.csv").exists() and not (out / "students" / f"{student_key('slow')}.json").exists()
    (folder / "slow" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")  # quick now: the rerun is not timed
    again = batch_here(course, folder, out)
    assert again.returncode == 0, again.stderr
    rows = list(csv.reader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    slow = next(r for r in rows if r[0] == "slow")
    assert float(slow[1]) == load_course(course).exercise("ex01").points


def test_a_file_nested_too_deeply_to_scan_is_flagged_not_fatal(course, tmp_path, in_process_runner):
    """An expression hundreds of levels deep (valid Python: the import takes it) is more than
    the trusted scan's recursion can read: the student is flagged for review and graded, the
    others too, and `grade ex01` says the same, never a traceback."""
    folder = tmp_path / "cohort"
    sums = SOLUTION_EX01 + "\nTOTAL = " + " + ".join(["1"] * 600) + "\n"  # the visitor's depth
    signs = SOLUTION_EX01 + "\nNEGATIVE = " + "-" * 4000 + "1\n"  # the parser's own depth
    for name, source in (("honest", SOLUTION_EX01), ("sums", sums), ("signs", signs)):
        (folder / name).mkdir(parents=True)
        (folder / name / EX01).write_text(source, encoding="utf-8")
    run = batch_here(course, folder, tmp_path / "out")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    students = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["students"]
    assert set(students) == {"honest", "sums", "signs"}
    full = students["honest"]["exercises"][0]["max_score"]
    assert students["honest"]["exercises"][0]["score"] == full and not students["honest"]["review"]["flagged"]
    assert students["sums"]["exercises"][0]["score"] == full  # graded as it is: the flag is for a person
    for name in ("sums", "signs"):
        assert students[name]["review"]["flagged"], students[name]["review"]
        assert any("nested too deeply" in r for r in students[name]["review"]["reasons"]), name
    single = grade("--course", str(course), "ex01", "--submission", str(folder / "signs"))
    assert single.returncode in (0, 1) and "Traceback" not in single.stdout + single.stderr, single.stderr[-2000:]


def test_outs_inside_dir_resume_and_merge_never_writes_into_a_student(course, tmp_path, in_process_runner):
    """A shard's OUT inside DIR killed before its cohort file was written (its lock alone), or
    whose seal no longer holds (an older kit's, moved), resumes and is sealed again; `grade
    merge --out DIR/<a student's folder>` is refused as `grade batch --out` is; a student's
    folder linked into DIR that holds OUT's two files beside its exercises is graded."""
    from grader.cohort.gradebook import sealed_out

    folder = tmp_path / "cohort"
    for name in ("ann", "bob"):
        (folder / name).mkdir(parents=True)
        (folder / name / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    half = folder / "shard1"
    half.mkdir()
    (half / ".grade-batch.lock").write_text("", encoding="utf-8")  # killed between the lock and the cohort file
    run = batch_here(course, folder, half, "--shard", "1/2")
    assert run.returncode == 0 and sealed_out(half, folder), run.stderr[-2000:]
    moved = folder / "shard2"
    assert batch_here(course, folder, tmp_path / "first2", "--shard", "2/2").returncode == 0
    (tmp_path / "first2").rename(moved)  # moved into DIR: its seal was for where it was
    assert not sealed_out(moved, folder)
    run = batch_here(course, folder, moved, "--shard", "2/2")
    assert run.returncode == 0 and sealed_out(moved, folder), run.stderr[-2000:]
    (folder / "cara").mkdir()  # a student who handed in nothing (yet): a folder of DIR
    merged = grade("merge", str(half), str(moved), "--out", str(folder / "cara"))
    assert merged.returncode == 2 and "student's folder" in merged.stderr, (merged.stdout + merged.stderr)[-2000:]
    assert list((folder / "cara").iterdir()) == []
    shutil.rmtree(folder / "cara")
    elsewhere = tmp_path / "elsewhere" / "dan"
    elsewhere.mkdir(parents=True)
    (elsewhere / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    (elsewhere / "cohort.json").write_text(json.dumps({"cohort": str(folder.resolve())}), encoding="utf-8")
    (elsewhere / ".grade-batch.lock").write_text("", encoding="utf-8")
    (folder / "dan").symlink_to(elsewhere)
    run = batch_here(course, folder, tmp_path / "all")
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads((tmp_path / "all" / "results.json").read_text(encoding="utf-8"))["students"]
    assert sorted(rows) == ["ann", "bob", "dan"], sorted(rows)  # the shards' OUTs skipped, sealed
    assert rows["dan"]["score"] == rows["ann"]["score"] > 0, rows["dan"]  # ex01 in full, as ann's


def test_names_printed_on_the_terminal_cannot_drive_it(tmp_path):
    """DIR's entries the batch names on stderr (not students, other runs' OUTs): ESC, CR and BEL
    shown as \\xNN, never sent to the terminal; a name literally holding "\\x1b" stays apart."""
    cohort = tmp_path / "cohort"
    cohort.mkdir()
    (cohort / "clear\x1b[2J\r\a.zip").write_text("", encoding="utf-8")
    (cohort / "clear\\x1b[2J.zip").write_text("", encoding="utf-8")
    shown = not_students(cohort)
    assert sorted(shown) == ["clear\\\\x1b[2J.zip", "clear\\x1b[2J\\x0d\\x07.zip"], shown
    assert not any(c < " " for name in shown for c in name)


FIND = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from grader.cohort.students import find_students
from grader.model.course import load_course
found = find_students(Path(sys.argv[2]), load_course(Path(sys.argv[3])), Path(sys.argv[4]))
print(json.dumps([[s.name, sorted(s.present), [p["reason"] for p in s.problems]] for s in found]))
"""


def test_an_exercises_folder_that_cannot_be_opened_hides_nothing():
    """An `exercises/` no one may open (mode 000, as the ordinary user a batch runs as): noted,
    and the work beside it is read, as a single run reads it."""
    import tempfile

    from tests.sandbox.as_user import as_user_prefix

    place = Path(tempfile.mkdtemp(dir="/tmp", prefix="grade-shut-"))
    try:
        os.chmod(place, 0o755)
        student = place / "cohort" / "s"
        (student / "exercises").mkdir(parents=True)
        (student / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
        for path in [place / "cohort", student, student / EX01, student / "exercises"]:
            os.chmod(path, 0o755)
        os.chmod(student / "exercises", 0)
        args = [str(KIT), str(place / "cohort"), str(KIT / "course.toml"), str(place / "staged")]
        if ROOT:  # root opens anything: as an ordinary user, who cannot
            prefix = as_user_prefix(place, 61998)
            os.chmod(place, 0o777)
            run = subprocess.run([*prefix, sys.executable, "-c", FIND, *args], capture_output=True, text=True,
                                 timeout=300, cwd="/")
        else:
            run = subprocess.run([sys.executable, "-c", FIND, *args], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        assert json.loads(run.stdout) == [["s", ["ex01"], ["unreadable"]]], run.stdout
    finally:
        os.chmod(place / "cohort" / "s" / "exercises", 0o755)
        shutil.rmtree(place, ignore_errors=True)


def test_the_entry_cap_is_each_folders_own(course, tmp_path):
    """3,000 files at the top and 1,500 beside the work in `exercises/`: neither folder is over
    the cap (4,000 each, as a single run lists one), so the work is graded."""
    student = tmp_path / "cohort" / "s"
    (student / "exercises").mkdir(parents=True)
    (student / "exercises" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    for i in range(3000):
        (student / f"note{i}.txt").write_bytes(b"")
    for i in range(1500):
        (student / "exercises" / f"scratch{i}.txt").write_bytes(b"")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged")
    assert found[0].present == {"ex01"} and not found[0].problems, found[0].problems
    for i in range(2600):  # exercises/ itself over the cap: refused, and the folder named
        (student / "exercises" / f"more{i}.txt").write_bytes(b"")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged2")
    assert not found[0].present and "exercises" in found[0].problems[0]["en"], found[0].problems


def test_work_under_another_name_is_said(course, tmp_path):
    """`ex01_mywindows.py` (the course's `ex01_windows.py` absent) is not graded, and the note
    says which name the course wants; `ex٠١_windows.py` (Arabic-Indic digits) is no exercise file."""
    student = tmp_path / "cohort" / "s"
    student.mkdir(parents=True)
    (student / "ex01_mywindows.py").write_text(SOLUTION_EX01, encoding="utf-8")
    (student / "ex\u0660\u0661_windows.py").write_text(SOLUTION_EX01, encoding="utf-8")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged")
    assert not found[0].present
    assert [(p["file"], p["reason"], p.get("peer")) for p in found[0].problems if p["reason"] == "renamed"] == \
        [("ex01_mywindows.py", "renamed", EX01)], found[0].problems


@pytest.mark.parametrize("name", ["EX01_windows.py", "ex01_windows.py.txt", "ex01_windows.pyc", "ex01.py",
                                  "Ex01_Windows.PY"])
def test_other_shapes_of_a_renamed_file_are_said(course, tmp_path, name):
    """The exercise's file under a name the course does not read is noted with the name it wants."""
    student = tmp_path / "cohort" / "s"
    student.mkdir(parents=True)
    (student / name).write_text(SOLUTION_EX01, encoding="utf-8")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged")
    assert not found[0].present
    assert [(p["file"], p["reason"], p.get("peer")) for p in found[0].problems if p["reason"] == "renamed"] == \
        [(name, "renamed", EX01)], found[0].problems


def test_helpers_never_crowd_an_exercise_out_of_the_total_cap(course, tmp_path):
    """Files count against the 16 MiB cap exercise files first: big helpers sorting before them
    (`a0.py`...) are the ones refused."""
    from grader.cohort.capped import SOURCE_CAP, TOTAL_CAP

    student = tmp_path / "cohort" / "s"
    student.mkdir(parents=True)
    helpers = TOTAL_CAP // SOURCE_CAP
    for i in range(helpers):
        (student / f"a{i}.py").write_bytes(b"#" * SOURCE_CAP)
    (student / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged")
    assert found[0].present == {"ex01"}, found[0].problems
    assert [p["file"] for p in found[0].problems if p["reason"] == "over_total"] == [f"a{helpers - 1}.py"]


def test_a_folder_named_exercises_in_another_case_is_said(course, tmp_path):
    student = tmp_path / "cohort" / "s"
    (student / "Exercises").mkdir(parents=True)
    (student / "Exercises" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    found = find_students(tmp_path / "cohort", load_course(course), tmp_path / "staged")
    assert not found[0].present
    assert [(p["file"], p["peer"]) for p in found[0].problems if p["reason"] == "renamed"] == \
        [("Exercises", "exercises/")], found[0].problems


def test_a_copy_beside_the_released_notebook_is_not_graded_over_it(course, tmp_path):
    """nbgrader grades `ch05/ch05.ipynb`; a student's `ch05_old.ipynb` beside it (the stub,
    sorting after it) is noted, never joined in to override the work."""
    def notebook(code: str) -> str:
        cell = {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade": False, "locked": False,
                                                               "grade_id": "ex01_answer", "schema_version": 3}},
                "source": code, "outputs": [], "execution_count": None}
        return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    folder = tmp_path / "submitted" / "alice" / "ch05"
    folder.mkdir(parents=True)
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")  # a course folder
    (folder / "ch05.ipynb").write_text(notebook(SOLUTION_EX01), encoding="utf-8")
    (folder / "ch05_old.ipynb").write_text(notebook("def shift_pairs(tokens):\n    raise NotImplementedError\n"),
                                           encoding="utf-8")
    found = find_students(tmp_path, load_course(course), tmp_path / "staged")
    assert [s.name for s in found] == ["alice"] and found[0].present == {"ex01"}
    assert (found[0].folder / EX01).read_text(encoding="utf-8").count("def shift_pairs") == 1
    assert [p["reason"] for p in found[0].problems] == ["extra_notebook"], found[0].problems
    # a hidden folder beside the assignment (Jupyter's checkpoints, an old copy) is no assignment
    hidden = tmp_path / "submitted" / "alice" / ".old"
    hidden.mkdir()
    (hidden / "ex01.ipynb").write_text(notebook("def make_windows(tokens, block_size):\n    return None\n"),
                                       encoding="utf-8")
    found = find_students(tmp_path, load_course(course), tmp_path / "staged2")
    assert "return None" not in (found[0].folder / EX01).read_text(encoding="utf-8")


@pytest.mark.skipif(not ROOT, reason="an ordinary user's run, started as root")
def test_a_cohort_folder_that_can_be_listed_but_not_entered_is_a_usage_error():
    """DIR at mode 0600 (as the ordinary user a batch runs as): exit 2, as for modes 000 and
    300, not a gradebook of zeros ("cannot be opened" for every student) and exit 0."""
    import tempfile

    from tests.sandbox.as_user import as_user_prefix

    place = Path(tempfile.mkdtemp(dir="/tmp", prefix="grade-listed-"))
    try:
        os.chmod(place, 0o777)
        (place / "cohort" / "alice").mkdir(parents=True)
        (place / "cohort" / "alice" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
        for path in (place / "cohort", place / "cohort" / "alice"):
            os.chown(path, 61998, 61998)
        os.chmod(place / "cohort", 0o600)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(place), "GRADE_LANG": "en"}
        run = subprocess.run([*as_user_prefix(place, 61998), str(Path(sys.executable).parent / "grade"), "batch",
                              str(place / "cohort"), "--out", str(place / "out"), "--only", "ex01"],
                             capture_output=True, text=True, timeout=300, cwd="/", env=env)
        assert run.returncode == 2 and "cannot enter" in run.stderr, run.stderr[-2000:]
        assert not (place / "out").exists()
    finally:
        shutil.rmtree(place, ignore_errors=True)


def test_out_in_a_student_folder_that_is_a_link_is_refused(tmp_path):
    """`--out DIR/alice/out` where DIR/alice links to the student's real folder, or `--out
    DIR/empty` for a link to an empty one: refused as for a plain student folder (resolved,
    the link's target is outside DIR, and the OUT was once written into alice's own folder)."""
    from grader.cohort.batch import OutError, check_out

    (tmp_path / "elsewhere" / "alice").mkdir(parents=True)
    (tmp_path / "elsewhere" / "empty").mkdir()
    (tmp_path / "elsewhere" / "alice" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    folder = tmp_path / "cohort"
    folder.mkdir()
    for name in ("alice", "empty"):
        (folder / name).symlink_to(tmp_path / "elsewhere" / name)
    for out in (folder / "alice" / "out", folder / "empty", folder / "alice"):
        with pytest.raises(OutError, match="a link"):
            check_out(folder, out)
    check_out(folder, tmp_path / "out")  # beside DIR: fine


def test_one_submission_given_as_the_cohort_is_a_usage_error(course, tmp_path):
    """`grade batch alice --out OUT`: alice's exercise files at DIR's top are no student
    folders; once "0 students" and exit 0, now exit 2 saying to use `grade all --submission`."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    run = batch_here(course, tmp_path / "alice", tmp_path / "out")
    assert run.returncode == 2 and "grade all --submission" in run.stderr, run.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_a_folder_holding_both_kinds_is_read_as_most_of_the_cohort(course, tmp_path):
    """A notebook student with the stub's `exercises/ex01_windows.py` (or an `ex99_scratch.py`)
    beside `ch05/ch05.ipynb`, in a cohort of notebooks: its notebook is graded, as before."""
    import nbformat

    cohort = tmp_path / "cohort"
    cell = nbformat.v4.new_code_cell(SOLUTION_EX01)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": "ex01_windows",
                                 "schema_version": 3}
    for name in ("bob", "carol", "zoe"):
        (cohort / name / "ch05").mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), cohort / name / "ch05" / "ch05.ipynb")
    (cohort / "carol" / "exercises").mkdir()
    shutil.copy(KIT / "exercises" / EX01, cohort / "carol" / "exercises" / EX01)
    (cohort / "zoe" / "ex99_scratch.py").write_text("print(1)\n", encoding="utf-8")
    found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    for name in ("bob", "carol", "zoe"):
        assert found[name].present == {"ex01"}, (name, found[name].problems)
        assert "raise NotImplementedError" not in (found[name].folder / EX01).read_text(encoding="utf-8")


def test_each_folder_is_read_as_what_it_holds(course, tmp_path):
    """Two .py students and two, then three, notebook students: each graded from its own work,
    whichever kind most of the cohort handed in (once the minority's rows were all "no exercise
    files", and one more student of the other kind flipped every row)."""
    import nbformat

    cohort = tmp_path / "cohort"
    for name in ("py1", "py2"):
        (cohort / name).mkdir(parents=True)
        (cohort / name / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    cell = nbformat.v4.new_code_cell(SOLUTION_EX01)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": "ex01_windows",
                                 "schema_version": 3}
    for names in (("nb1", "nb2"), ("nb3",)):
        for name in names:
            (cohort / name / "ch05").mkdir(parents=True)
            nbformat.write(nbformat.v4.new_notebook(cells=[cell]), cohort / name / "ch05" / "ch05.ipynb")
        found = find_students(cohort, load_course(course), tmp_path / f"staged-{names[0]}")
        expected = ["py1", "py2", "nb1", "nb2", *(["nb3"] if "nb3" in names else [])]
        assert {s.name: s.present for s in found} == {n: {"ex01"} for n in expected}, \
            [(s.name, s.problems) for s in found]


def test_a_link_realpath_cannot_follow_is_a_row_not_the_end(course, tmp_path):
    """`viaproc -> /proc/1/root/tmp`: readlink of /proc/1/root is refused (EACCES) to all but
    its owner's peers; once that stopped the whole batch before any gradebook was written."""
    from unittest import mock

    cohort = tmp_path / "cohort"
    (cohort / "ok").mkdir(parents=True)
    (cohort / "ok" / EX01).write_text(SOLUTION_EX01, encoding="utf-8")
    os.symlink(tmp_path, cohort / "viaproc")
    real = os.path.realpath

    def refusing(path, *args, **kwargs):
        if str(path).endswith("viaproc"):
            raise PermissionError(13, "Permission denied", "/proc/1/root")
        return real(path, *args, **kwargs)

    with mock.patch("grader.cohort.students.os.path.realpath", refusing):
        found = {s.name: s for s in find_students(cohort, load_course(course), tmp_path / "staged")}
    assert found["ok"].present == {"ex01"}
    assert [p["reason"] for p in found["viaproc"].problems] == ["kit_link"]


def test_a_students_folder_holding_a_file_named_like_outs_lock_is_no_out(tmp_path):
    """`results/` holds `answers.txt` and a `.grade-batch.lock`: a student's folder, not a killed
    batch's OUT (which holds only what a batch writes). `--out DIR/results` is refused, and the
    student keeps their row; a killed batch's OUT in DIR is still taken up again."""
    from grader.cohort.batch import OutError, check_out
    from grader.cohort.layout import LOCK_NAME

    folder = tmp_path / "cohort"
    (folder / "results").mkdir(parents=True)
    (folder / "results" / "answers.txt").write_text("42", encoding="utf-8")
    (folder / "results" / LOCK_NAME).write_text("", encoding="utf-8")
    with pytest.raises(OutError, match="student's folder"):
        check_out(folder, folder / "results")
    (folder / "killed" / "staged").mkdir(parents=True)
    (folder / "killed" / LOCK_NAME).write_text("", encoding="utf-8")
    check_out(folder, folder / "killed")
