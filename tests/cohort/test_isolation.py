"""每个练习单独一个进程：一个练习的代码改不了另一个练习的分数。

Each exercise of a submission runs in its own worker, which has run only that exercise's
file and what it imports: an ex01 that sets torch's default dtype to float64 at import (a
natural experiment) and patches `torch.allclose` and a builtin leaves the student's correct
ex02 with full marks, in `grade batch` and in `grade all`; and the processes ex01 starts end
with its worker, before ex02's starts. Graded officially (bubblewrap), no student reaches
another run's cohort or OUT, a classmate's folder linked into DIR, or a key another worker
tried to leave in the kernel's keyrings.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.cohorts import batch_here
from tests.in_process import grade
from tests.kit import EX01, EX02, KIT, OFFICIAL, make_course
from tests.processes import lingering

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                reason="official grading runs in bubblewrap (Linux; .ci/run installs it)")

EX03 = "ex03_param_budget.py"

MEDDLING = '''
import builtins
import torch

torch.set_default_dtype(torch.float64)
torch.allclose = lambda *a, **k: False
builtins.sum = lambda *a, **k: 0
'''


@pytest.fixture(scope="module")
def course_123(tmp_path_factory):
    """ex01, ex02 and ex03: ex03 starts a process of its own (after ex01's, which linger)."""
    return make_course(tmp_path_factory.mktemp("course123"), exercises=("ex01", "ex02", "ex03"))


def _submission(folder):
    folder.mkdir(parents=True)
    (folder / EX01).write_text(MEDDLING + (KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / EX02).write_text((KIT / "solutions" / EX02).read_text(encoding="utf-8"), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def reaching(course_123, tmp_path_factory):
    """One batch (A) of alice, a single `grade ex01 --submission` run, then one batch (B, one
    judge) of the students who try to reach past their own folder or their exercise's worker,
    each in a way of their own (its test says which); B's gradebook. Every folder of A's and
    of the single run readable by every uid: only the sandbox keeps them away."""
    import shutil

    tmp = tmp_path_factory.mktemp("reaching")
    cohort_a, single, cohort_b = tmp / "cohort-a", tmp / "single", tmp / "cohort-b"
    real = tmp / "elsewhere" / "alice"  # alice's own folder, linked into B
    for folder in (cohort_a / "alice", single, real):
        folder.mkdir(parents=True)
        shutil.copy(KIT / "solutions" / EX01, folder / EX01)
    first = batch_here(course_123, cohort_a, tmp / "out a", "--only", "ex01")
    assert first.returncode == 0, first.stderr[-2000:]
    alone = grade("--course", str(course_123), "ex01", "--submission", str(single), "--format", "json", env=OFFICIAL)
    assert alone.returncode == 0, alone.stderr[-2000:]
    staged = next((tmp / "out a" / "staged").glob("alice~*")) / EX01
    for path in (tmp, *[p for root in (cohort_a, single, tmp / "out a", tmp / "elsewhere") for p in (root, *root.rglob("*"))]):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    _submission(cohort_b / "meddler")
    (cohort_b / "alice").symlink_to(real)
    reads = {"mallory": staged, "lurker": real / EX01}  # exec'd as they are
    copies = {"thief_a": cohort_a / "alice" / EX01, "thief_single": single / EX01}  # exec'd in a namespace
    for name, path in reads.items():
        (cohort_b / name).mkdir(parents=True)
        (cohort_b / name / EX01).write_text(f"exec(open({str(path)!r}).read())\n", encoding="utf-8")
    for name, path in copies.items():
        (cohort_b / name).mkdir(parents=True)
        (cohort_b / name / EX01).write_text(COPY_OF.format(path=str(path)), encoding="utf-8")
    _lingers(cohort_b / "lingers")
    _key_students(cohort_b)
    second = batch_here(course_123, cohort_b, tmp / "out-b")
    assert second.returncode == 0, second.stderr[-2000:]
    return json.loads((tmp / "out-b" / "results.json").read_text(encoding="utf-8"))["students"]


def _exercises(student: dict) -> dict:
    return {e["id"]: e for e in student["exercises"]}


def test_one_exercise_cannot_reach_another_in_a_batch(reaching):
    ex02 = _exercises(reaching["meddler"])["ex02"]
    assert ex02["score"] == ex02["max_score"] > 0, [c["message"] for c in ex02["checks"] if not c["passed"]]


def test_one_exercise_cannot_reach_another_in_grade_all(course, tmp_path):
    folder = _submission(tmp_path / "sub")
    run = grade("--course", str(course), "all", "--submission", str(folder), "--format", "json", env=OFFICIAL)
    ex02 = {e["id"]: e for e in json.loads(run.stdout)["exercises"]}["ex02"]
    assert ex02["score"] == ex02["max_score"] > 0, [c["message"] for c in ex02["checks"] if not c["passed"]]


LINGERING = lingering(80)  # as many as the worker's process cap allows

STARTS_ONE = '''
import subprocess
import sys

subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)  # a process of its own, once
'''


def _lingers(folder):
    folder.mkdir(parents=True)
    (folder / EX01).write_text(LINGERING + (KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / EX03).write_text(STARTS_ONE + (KIT / "solutions" / EX03).read_text(encoding="utf-8"), encoding="utf-8")


def test_an_exercises_processes_end_before_the_next_exercise(reaching):
    """ex01's processes (setsid'd, sleeping) are gone when ex03 runs: its own process starts
    (they would hold the process cap of the workers' uid, and the next exercise score 0)."""
    ex03 = _exercises(reaching["lingers"])["ex03"]
    assert ex03["score"] == ex03["max_score"] > 0, [c["message"] for c in ex03["checks"] if not c["passed"]]


def test_no_student_reads_another_batchs_out(reaching):
    """Another batch's OUT (its staged copies of every student, its answers): a student who
    knows where it lies and copies a classmate's file from it gets nothing (it is not there)."""
    ex01 = _exercises(reaching["mallory"])["ex01"]
    assert ex01["score"] == 0
    told = " ".join(c["message"] for c in ex01["checks"])
    assert "FileNotFoundError" in told, told


# A key added to the kernel's keyrings without ctypes (a perl subprocess: add_key is syscall 248,
# request_key 249 on x86_64), in the user keyring (-4) and in the session keyring (-3), shared by
# every process of a uid and of a session.
KEY_WRITER = '''
import subprocess
for keyring in (-4, -3):  # refused by the syscall filter: tried all the same
    subprocess.run(["perl", "-e", 'my ($t, $n, $d) = ("user", "grade-isolation", "hello"); '
                    'print syscall(248, $t, $n, $d, 5, ' + str(keyring) + ')'], capture_output=True, text=True)
'''
KEY_READER = '''
import subprocess
_found = subprocess.run(["perl", "-e", 'my ($t, $n) = ("user", "grade-isolation"); print syscall(249, $t, $n, 0, 0)'],
                        capture_output=True, text=True).stdout.strip()
if _found and int(_found) >= 0:
    raise RuntimeError("a key another worker added: " + _found)
'''


KEY_STUDENTS = ("a_writer", "b_reader")


def _key_students(cohort):
    """The writer's ex01 tries to add the key; its ex03, and the reader's ex01 and ex03, look for it."""
    solutions = {name: (KIT / "solutions" / name).read_text(encoding="utf-8") for name in (EX01, EX02, EX03)}
    for student, first in zip(KEY_STUDENTS, (KEY_WRITER, KEY_READER)):
        (cohort / student).mkdir(parents=True)
        (cohort / student / EX01).write_text(first + solutions[EX01], encoding="utf-8")
        (cohort / student / EX02).write_text(solutions[EX02], encoding="utf-8")
        (cohort / student / EX03).write_text(KEY_READER + solutions[EX03], encoding="utf-8")


@pytest.mark.skipif(not os.path.exists("/usr/bin/perl") or os.uname().machine != "x86_64",
                    reason="adds keys through perl's syscall, with x86_64's numbers")
def test_a_key_in_the_kernels_keyrings_reaches_no_other_worker(reaching):
    """One judge (-j 1): the writer's ex01 tries to add the key, its ex03 and a later student's ex01
    and ex03 (under the same uid) look for it: none finds it, all keep full marks."""
    for name in KEY_STUDENTS:
        student = reaching[name]
        assert student["score"] == student["max_score"] > 0, (name, [c["message"] for e in student["exercises"]
                                                                    for c in e["checks"] if not c["passed"]])


def test_a_student_folder_linked_into_dir_is_hidden_where_it_lies(reaching):
    """DIR/alice links to alice's real folder elsewhere (readable by all): lurker's code reads
    it there and runs it. Out of reach like DIR itself."""
    assert _exercises(reaching["alice"])["ex01"]["score"] == 10
    assert _exercises(reaching["lurker"])["ex01"]["score"] == 0


COPY_OF = """
_path = {path!r}
_ns = {{}}
exec(compile(open(_path).read(), "ex01", "exec"), _ns)
make_windows, shift_pairs, count_targets = _ns["make_windows"], _ns["shift_pairs"], _ns["count_targets"]
"""


def test_another_runs_students_are_out_of_reach(reaching):
    """Batch A's cohort, and a single run's `--submission` folder, where every user may read
    them: a student of a later batch B reads a file there by its path (the path is in
    /proc/PID/cmdline while A runs). Neither is in B's sandbox: B's student scores nothing."""
    assert {name: reaching[name]["score"] for name in ("thief_a", "thief_single")} == {"thief_a": 0, "thief_single": 0}
