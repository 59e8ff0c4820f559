"""`grade batch` / `grade merge`：成绩册、断点续评（kill -9）、分片合并、nbgrader 提交。

Tests for grade batch: the gradebook's shape, resuming after kill -9 gives the same
gradebook without regrading finished students, shards merge into the full gradebook,
nbgrader submissions are extracted and graded. Uses the course cut to ex01 and ex02 that
tests.kit.make_course builds (symlinks to the kit's folders), everything under tmp_path.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests import corpus
from tests.cohorts import batch_here, cohort
from tests.kit import EX01, GRADE, KIT
from tests.in_process import grade
from tests.processes import alongside, busy_sandbox, busy_sandboxes, keep_killing, left_in_session


@pytest.fixture(scope="module")
def uninterrupted(course, tmp_path_factory):
    """Six students (honest, wrong, stub, twice; each import 0.4 s) graded without interruption,
    with a JUnit and a Gradescope report each: the gradebook every run must give, and that run."""
    tmp = tmp_path_factory.mktemp("uninterrupted")
    folder = cohort(tmp / "cohort", 6, slow=0.4)
    full = batch_here(course, folder, tmp / "full", "--lang", "en", "--format", "junit", "--format", "gradescope")
    assert full.returncode == 0, full.stderr
    return folder, tmp / "full", full


def test_gradebook(course, uninterrupted):
    _, out, run = uninterrupted
    from grader.cohort.batch import time_bound
    from grader.model.course import load_course

    assert time_bound(load_course(course), ["ex01", "ex02"], 6, 1, "en") in run.stderr  # said before grading
    rows = list(csv.reader((out / "grades.csv").open(encoding="utf-8")))
    assert rows[0] == ["student", "ex01", "ex02", "total", "max", "note", "review"]
    assert rows[1][0] == "(max)"
    col = {name: i for i, name in enumerate(rows[0])}
    scores = {r[0]: r for r in rows[2:]}
    assert scores["s00"][col["total"]] == scores["s00"][col["max"]] == rows[1][col["total"]]  # honest: full marks
    assert scores["s00"][col["note"]] == ""
    assert scores["s01"][col["total"]] == "0" and scores["s02"][col["total"]] == "0"
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    entry = book["students"]["s00"]
    assert set(entry) >= {"score", "max_score", "exercises"}
    assert {"name", "passed", "score", "max_score", "message"} <= set(entry["exercises"][0]["checks"][0])


def test_resume_after_kill9_is_identical(course, uninterrupted, tmp_path):
    """kill -9 of a whole batch part way: the rerun (two judges) grades only the students not
    yet saved, and its gradebook is, to the byte, the uninterrupted one's (one judge each)."""
    folder, full, _ = uninterrupted
    out = tmp_path / "killed"
    cmd = GRADE + ["--course", str(course), "--lang", "en", "batch", str(folder), "--out", str(out), "--no-progress",
                   "-j", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list((out / "students").glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    left_in_session(proc.pid, patience=60)  # its judges, which hold OUT's lock till they are gone
    done = {p.name: p.stat().st_mtime_ns for p in (out / "students").glob("*.json")}
    assert 2 <= len(done) < 6, "the kill came too late to test resuming"
    assert not (out / "grades.csv").exists()

    rerun = batch_here(course, folder, out, "-j", "2", "--lang", "en")
    assert rerun.returncode == 0, rerun.stderr
    for name, mtime in done.items():  # finished students were not graded again
        assert (out / "students" / name).stat().st_mtime_ns == mtime
    for name in ("grades.csv", "results.json"):
        assert (out / name).read_bytes() == (full / name).read_bytes()


def _saved(out, at_least: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list((out / "students").glob("*.json"))) < at_least:
        time.sleep(0.05)


def test_a_sandbox_killed_from_outside_costs_no_student_a_point(course, uninterrupted, tmp_path):
    """kill -9 of a judge slot's sandbox (bwrap, its zygote, the worker grading then): that
    worker's call is made again from a sandbox started anew, the batch goes on, and its gradebook
    is the uninterrupted one."""
    folder, full, _ = uninterrupted
    out = tmp_path / "killed"

    def kill_one() -> None:  # the batch runs in this process: its sandboxes are found under it
        _saved(out, 2)
        os.kill(busy_sandbox(os.getpid()), signal.SIGKILL)

    with alongside(kill_one):
        run = batch_here(course, folder, out, "--lang", "en")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    for name in ("grades.csv", "results.json"):
        assert (out / name).read_bytes() == (full / name).read_bytes()


def test_sandboxes_that_cannot_be_kept_stop_the_batch_and_charge_no_one(course, uninterrupted, tmp_path):
    """Every sandbox killed as soon as it starts: the batch stops, exit 3, saying why; no
    student it held is scored; a rerun gives the uninterrupted gradebook."""
    import threading

    folder, full, _ = uninterrupted
    out = tmp_path / "killed"
    stop = threading.Event()

    def kill_every_one() -> None:  # until the batch has ended (the rerun's sandboxes are left alone)
        _saved(out, 2)
        busy_sandbox(os.getpid())
        keep_killing(os.getpid(), stop).join()

    with alongside(kill_every_one, stop):
        run = batch_here(course, folder, out, "--lang", "en")
    assert run.returncode == 3, run.stderr
    assert "could not be started again" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (out / "grades.csv").exists()
    saved = sorted((out / "students").glob("*.json"))
    assert 2 <= len(saved) < 6, "the kill came too late to test"
    for state in saved:  # each student saved was graded before the kill, as in the full run
        assert state.read_bytes() == (full / "students" / state.name).read_bytes()

    rerun = batch_here(course, folder, out, "--lang", "en")
    assert rerun.returncode == 0, rerun.stderr
    for name in ("grades.csv", "results.json"):
        assert (out / name).read_bytes() == (full / name).read_bytes()


def test_changed_submission_is_regraded(course, tmp_path, in_process_runner):
    folder = cohort(tmp_path / "cohort", 2)
    assert batch_here(course, folder, tmp_path / "out", "--only", "ex01").returncode == 0
    (folder / "s01" / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    assert batch_here(course, folder, tmp_path / "out", "--only", "ex01").returncode == 0
    book = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert book["students"]["s01"]["exercises"][0]["score"] == book["students"]["s00"]["exercises"][0]["score"] > 0


def test_one_student_is_counted_in_the_singular(course, uninterrupted, tmp_path):
    """A run of one student (shard 1 of 6, on a copy of the uninterrupted OUT: none graded again)."""
    folder, full, _ = uninterrupted
    shutil.copytree(full, tmp_path / "out")
    run = batch_here(course, folder, tmp_path / "out", "--shard", "1/6", "--lang", "en")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1].startswith("1 student (0 with a note), mean "), run.stdout


def test_shards_merge_into_the_full_gradebook(course, uninterrupted, tmp_path, in_process_runner):
    folder, full, _ = uninterrupted
    for i in (1, 2):
        run = batch_here(course, folder, tmp_path / f"shard{i}", "--shard", f"{i}/2", "--lang", "en")
        assert run.returncode == 0, run.stderr
    a = json.loads((tmp_path / "shard1" / "results.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "shard2" / "results.json").read_text(encoding="utf-8"))
    assert set(a["students"]).isdisjoint(b["students"]) and len(a["students"]) + len(b["students"]) == 6
    merge = ["--course", str(course), "--lang", "en", "merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"),
             "--out", str(tmp_path / "merged")]
    run = grade(*merge)
    assert run.returncode == 0, (run.stdout + run.stderr)
    for name in ("grades.csv", "results.json"):
        assert (tmp_path / "merged" / name).read_bytes() == (full / name).read_bytes()
    again = grade(*merge)  # a CI job rerun: same folder
    assert again.returncode == 0, (again.stdout + again.stderr)


@pytest.mark.parametrize("book", [
    {"exercises": [{"id": "ex01", "max_score": 10}],
     "students": {"a": {"exercises": [{"id": "ex01", "checks": [{"max_score": 10, "passed": True}]}], "note": 5}}},
    {"exercises": [{"id": "ex01"}], "students": {}},
    {"exercises": [{"id": "ex01", "max_score": True}], "students": {}},
    {"exercises": ["ex01"], "students": {}},
    {"exercises": [{"id": "ex01", "max_score": 10}], "students": ["a"]},
], ids=["note not text", "no max_score", "max_score a boolean", "header not an object", "students a list"])
def test_a_malformed_shard_is_refused_before_anything_is_written(course, tmp_path, book):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text(json.dumps(book), encoding="utf-8")
    run = grade("--course", str(course), "merge", str(tmp_path / "bad"), "--out", str(tmp_path / "out"))
    assert run.returncode == 2 and ("cannot be read" in run.stderr or "malformed" in run.stderr), (run.stdout + run.stderr)
    assert "Traceback" not in run.stderr  # said, never a traceback (tests.in_process raises one the command let out)
    assert not (tmp_path / "out" / "results.json").exists()


def test_bad_shard_is_a_usage_error(course, tmp_path):
    folder = cohort(tmp_path / "cohort", 1)
    run = grade("--course", str(course), "batch", str(folder), "--out", str(tmp_path / "out"), "--shard", "3/2")
    assert run.returncode == 2 and "--shard" in run.stderr, (run.stdout + run.stderr)
    assert not (tmp_path / "out").exists()  # refused before anything is graded


def _notebook(cells: list[tuple[str, dict | None]]) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "execution_count": None, "outputs": [], "source": src,
                       "metadata": ({"nbgrader": meta} if meta else {})} for src, meta in cells]}


def test_nbgrader_submissions(course, tmp_path, in_process_runner):
    solution = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
    stub = (KIT / "exercises" / EX01).read_text(encoding="utf-8")
    for student, code in (("ann", solution), ("ben", stub)):
        folder = tmp_path / "submitted" / student / "ch05"
        folder.mkdir(parents=True)
        nb = _notebook([
            ("%matplotlib inline\nimport torch\n", None),
            (code, {"grade_id": "ex01_answer", "solution": True, "grade": False, "locked": False}),
            ("assert shift_pairs([1, 2, 3]) == ([1, 2], [2, 3])\n",
             {"grade_id": "ex01_tests", "solution": False, "grade": True, "points": 1, "locked": True}),
        ])
        (folder / "ch05.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    run = batch_here(course, tmp_path / "submitted", tmp_path / "out", "--only", "ex01")
    assert run.returncode == 0, run.stderr
    book = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert book["students"]["ann"]["score"] == book["students"]["ann"]["max_score"] > 0
    assert book["students"]["ben"]["score"] == 0
    from grader.cohort.names import student_key

    extracted = (tmp_path / "out" / "staged" / student_key("ann") / EX01).read_text(encoding="utf-8")
    assert "# %matplotlib inline" in extracted and "assert shift_pairs" not in extracted


def test_per_student_reports(uninterrupted):
    _, out, _ = uninterrupted
    from grader.cohort.names import student_key

    assert (out / "reports" / f"{student_key('s00')}.xml").is_file()
    data = json.loads((out / "reports" / f"{student_key('s00')}.gradescope.json").read_text(encoding="utf-8"))
    assert data["score"] == data["max_score"] > 0


_ = sys


def test_ctrl_c_stops_a_batch_at_once_and_the_next_run_finishes(course, tmp_path):
    """Ctrl-C while the judges grade slow students: the batch ends within seconds (not once
    each judge has finished its student), exit 130, no process of it left; the same command
    then grades everyone, as an uninterrupted run would."""
    folder = tmp_path / "cohort"
    slow = (KIT / "solutions" / EX01).read_text(encoding="utf-8").replace("def shift_pairs(tokens):", "def shift_pairs(tokens):\n    import time; time.sleep(600)", 1)
    for i in range(4):  # two in the judges' hands at the Ctrl-C, two not yet begun
        (folder / f"s{i}").mkdir(parents=True)
        (folder / f"s{i}" / EX01).write_text(slow, encoding="utf-8")

    def own_session():  # a terminal's foreground job: its own group, Ctrl-C not ignored
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    command = GRADE + ["--course", str(course), "batch", str(folder), "--out", str(tmp_path / "out"), "--no-progress",
                       "--only", "ex01", "-j", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=own_session)
    busy_sandboxes(proc.pid, 2)  # both judges are in their students' slow calls
    os.killpg(proc.pid, signal.SIGINT)
    proc.communicate(timeout=120)  # the students sleep ten minutes: only not waiting for them ends it sooner
    assert proc.returncode == 130, proc.returncode
    left = left_in_session(proc.pid)
    assert not left, left  # nothing of its session: judges, zygote, workers
    again = batch_here(course, folder, tmp_path / "out", "--only", "ex01", "-j", "2")
    assert again.returncode == 0, again.stderr[-2000:]
    rows = {r[0]: r for r in csv.reader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))}
    assert sorted(rows) == ["(max)", *[f"s{i}" for i in range(4)], "student"] and \
        len({rows[s][1] for s in rows if s not in ("(max)", "student")}) == 1


def test_a_link_beside_the_students_to_the_data_hides_nothing_they_need(tmp_path):
    """`data -> $GPT_COURSE_DATA` in DIR (an instructor's shortcut): its own row, and the corpus
    stays readable to every worker (once every link's target was hidden, and a correct ex07
    lost its data checks, charged as FileNotFoundError)."""
    folder = tmp_path / "cohort"
    (folder / "ok").mkdir(parents=True)
    shutil.copy(KIT / "solutions" / "ex07_split.py", folder / "ok")
    data = tmp_path / "data"  # the instructor's data folder, outside the kit (a link into the kit is refused)
    shutil.copytree(corpus.FOLDER / "tinyshakespeare", data / "tinyshakespeare")
    os.symlink(data, folder / "data")
    run = grade("batch", str(folder), "--out", str(tmp_path / "out"), "--only", "ex07", "--no-progress", "-j", "1",
                env={"GPT_COURSE_DATA": str(data)})
    assert run.returncode == 0, run.stderr
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))}
    assert rows["ok"]["total"] == rows["(max)"]["total"], rows
    assert "data" in rows


def test_the_progress_bar_shows_a_name_as_text(monkeypatch):
    """A folder named with a terminal's escapes or rich's markup is shown as it is written,
    never run (once ESC[2J reached the terminal and `[blink red]` blinked)."""
    import io

    from rich.console import Console
    from rich.progress import Progress, TextColumn

    import grader.report.live as live
    from grader.cohort.judges import _Bar

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100, color_system="truecolor")
    def started(**kw):
        progress = Progress(TextColumn("{task.description}"), console=console, auto_refresh=False)
        progress.start()
        return progress

    monkeypatch.setattr(live, "progress_bar", started)
    bar = _Bar(1, True)
    bar.advance("\x1b[2J[blink red]y")
    bar.refresh()
    bar.close()
    shown = screen.getvalue()
    assert "\x1b[2J" not in shown and "\x1b[5m" not in shown  # no clear screen, no blink
    assert "\\x1b[2J[blink red]y" in shown, repr(shown)


def test_ctrl_c_in_a_forks_own_hooks_is_not_lost():
    """Ctrl-C that arrives while os.fork runs its after-fork hooks (logging's lock): Python
    prints it there and drops it, and the batch went on to the end (exit 0). Held off during
    the fork, it reaches the code that forked."""
    code = """
import os, signal
# the default Ctrl-C whatever this test's process was left with (an ignored SIGINT is inherited)
signal.signal(signal.SIGINT, signal.default_int_handler)
from grader.cohort.children import fork_holding_ctrl_c
os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGINT))
fork = fork_holding_ctrl_c if os.environ["HOLD"] == "1" else os.fork
try:
    pid = fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print("went on")
except KeyboardInterrupt:
    print("stopped")
"""
    seen = {hold: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                                 env={**os.environ, "HOLD": hold}).stdout.strip() for hold in ("0", "1")}
    assert seen == {"0": "went on", "1": "stopped"}, seen
