"""机器很忙也不扣正确代码的分 / a busy machine costs a correct submission nothing.

A call's limit counts the student's own CPU and idle time, never the time it waited for a core
(grader.sandbox.clock). `grade batch -j 2` grades ex06 and ex07 (the checks that take the most of
a call's limit: ex06's whole corpus, ex07's split; 2 s a check, many times what they take) of a
correct student and of one whose ex07 loops without end on one input, while every core also runs
a busy loop, so that each judge waits for a core: the correct student keeps full marks, the other
keeps ex06's, and the endless loop is still stopped at its limit. (The whole course, side by side
with a quiet run, is bench/'s.)
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.cohorts import batch_here
from tests.kit import KIT, make_course

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                reason="official grading runs in bubblewrap (Linux); the run queue's delay is Linux's")

FILES = ["ex06_char_tokenizer.py", "ex07_split.py"]
# the docstring's small example (0.75) loops without end; every other call is answered right,
# so one call, not each check's first, waits out the limit on the busy machine
ENDLESS = """

_split_train_val = split_train_val


def split_train_val(data, train_frac=0.9):
    while train_frac == 0.75:
        pass
    return _split_train_val(data, train_frac)
"""


@pytest.fixture
def busy(monkeypatch):
    """A busy loop per core while the judges grade (the batch's `drive`, in this process): with
    two judges, more work than cores. How many cores were kept busy, each time it was driven."""
    import grader.cohort.batch as batch_module

    drive, driven = batch_module.drive, []

    def drive_on_a_busy_machine(*args, **kwargs):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
        driven.append(len(hogs))
        try:
            return drive(*args, **kwargs)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()

    monkeypatch.setattr(batch_module, "drive", drive_on_a_busy_machine)
    return driven


def test_correct_students_keep_full_marks_on_a_busy_machine_and_a_loop_is_still_stopped(busy, tmp_path):
    cohort = tmp_path / "cohort"
    for name in ("ana", "loops"):
        (cohort / name).mkdir(parents=True)
        for file in FILES:
            shutil.copy(KIT / "solutions" / file, cohort / name / file)
    with open(cohort / "loops" / "ex07_split.py", "a", encoding="utf-8") as ex07:
        ex07.write(ENDLESS)
    course = make_course(tmp_path, timeout=2, exercises=("ex06", "ex07"))  # the endless call: 2 s of its own CPU
    run = batch_here(course, cohort, tmp_path / "out", "-j", "2", "--lang", "en")
    assert run.returncode == 0, run.stderr[-3000:]
    assert busy == [os.cpu_count() or 1]  # the students were graded while every core was busy
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))}
    book = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["students"]
    lost = [(e["id"], c["name"], c["message"]) for e in book["ana"]["exercises"] for c in e["checks"]
            if not c["passed"] and not c["manual"]]
    assert not lost and rows["ana"]["total"] == rows["(max)"]["total"], lost
    loops = {e["id"]: e for e in book["loops"]["exercises"]}
    assert all(loops[e]["score"] == loops[e]["max_score"] for e in loops if e != "ex07"), loops
    stopped = [c for c in loops["ex07"]["checks"] if not c["passed"]]
    assert stopped and any("endless loop" in c["message"] or "time limit" in c["message"] for c in stopped), stopped
