"""What happened to the student's code, named: where a loop was, the signal of a crash, a runaway
recursion in a few frames, a print flood counted, a file that does not import said once."""

from __future__ import annotations

import re

import pytest

from grader.judge.subjects import WorkerSubject
from grader.judge.verdicts import call
from grader.sandbox import ForkZygote, WorkerDied, WorkerTimeout
from grader.sandbox.tracebacks import KEEP, where_from_dump

STUDENT = '''
import os, sys
def spin(n):
    total = 0
    while True:
        total += n
def crash():
    sys.setrecursionlimit(10**7)
    nested = []
    for _ in range(10**6):
        nested = [nested]
    return repr(nested)
def leave():
    os._exit(3)
def deep(n):
    return deep(n + 1)
def runaway():
    sys.setrecursionlimit(200_000)
    return deep(0)
def flood():
    for i in range(200_000):
        print("line", i)
    return 1
def chatty():
    for i in range(20):
        print("row", i)
    return 2
def close_all():
    os.closerange(3, 4096)  # "tidying up" every descriptor, the grader's channel among them
    return 4
def replace_all():
    null = os.open(os.devnull, os.O_RDWR)
    for fd in range(3, 64):
        if fd != null:
            try:
                os.dup2(null, fd)
            except OSError:
                pass
    return 5
def forge():
    import stat
    mark = b"\\ngrader-worker-exit-status: 9\\n"  # "killed by SIGKILL", as by someone outside
    for fd in range(3, 64):  # every pipe it holds: the dump pipe among them, filled to the brim
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"x" * (65536 - len(mark)) + mark)
        except OSError:
            pass
    os._exit(3)
class Odd(Exception):
    def __str__(self):
        raise SystemExit("no words")
def odd():
    raise Odd()
'''


@pytest.fixture(scope="module")
def zygote():
    z = ForkZygote().start()
    yield z
    z.close()


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "ex99_demo.py").write_text(STUDENT, encoding="utf-8")
    return tmp_path


def observe(zygote, folder, name, *args, timeout=20.0, module="ex99_demo"):
    subject = WorkerSubject(zygote, folder, module)
    try:
        return subject.observe(call(name, *args), timeout)
    finally:
        subject.close()


def test_a_loop_past_its_limit_says_the_students_line(zygote, folder):
    got = observe(zygote, folder, "spin", 1, timeout=0.5)
    assert got.error_type == "Timeout"
    # the loop's two lines: the dump names whichever was running when it was taken
    assert re.search(r'File "ex99_demo\.py", line [56], in spin', got.error["traceback"]), got.error["traceback"]
    assert "total += n" in got.error["traceback"] or "while True" in got.error["traceback"]
    assert "grader" not in got.error["traceback"]  # the student's frames only


def test_a_segfault_is_named_by_its_signal(zygote, folder):
    got = observe(zygote, folder, "crash")
    assert got.error_type == "WorkerDied" and got.error["signal"] == "SIGSEGV"
    assert "repr(nested)" in got.error["traceback"]
    from grader.judge.student_errors import student_error_finding

    finding = student_error_finding(got, "crash()")
    assert "segmentation fault (SIGSEGV)" in finding.en and "EOFError" not in finding.en + finding.zh


def test_an_early_exit_says_its_status(zygote, folder):
    got = observe(zygote, folder, "leave")
    assert got.error_type == "WorkerDied" and got.error["exit_code"] == 3


def test_an_exit_status_written_by_the_code_is_not_taken(zygote, folder):
    """The status comes from the zygote's own pipe: a forged one on the dump pipe (filled so that
    the real one would not have been read) is not what the judge reads."""
    got = observe(zygote, folder, "forge")
    assert got.error_type == "WorkerDied" and got.error["exit_code"] == 3, got.error
    assert "signal" not in got.error or got.error["signal"] is None


@pytest.mark.parametrize("name", ["close_all", "replace_all"])
def test_a_lost_channel_is_named_not_taken_for_os_exit(zygote, folder, name):
    from grader.judge.student_errors import student_error_finding

    got = observe(zygote, folder, name)
    assert got.error_type == "WorkerDied", got
    finding = student_error_finding(got, f"{name}()")
    assert "file descriptors (os.close, os.closerange, os.dup2)" in finding.en and "os._exit" not in finding.en
    assert "文件描述符" in finding.zh


def test_an_exception_whose_str_raises_is_still_the_students_error(zygote, folder):
    got = observe(zygote, folder, "odd")
    assert got.error_type == "Odd" and got.error["message"] == "<unprintable>"
    assert "raise Odd()" in got.error["traceback"]


def test_a_runaway_recursion_keeps_the_first_and_last_frames(zygote, folder):
    got = observe(zygote, folder, "runaway")
    assert got.error_type == "RecursionError"
    assert got.error["own_frames"] > 100_000
    frames = [line for line in got.error["traceback"].splitlines() if line.startswith("  File")]
    assert len(frames) == 2 * KEEP  # formatted: a few, not a hundred thousand
    assert "more calls" in got.error["traceback"] and "in runaway" in frames[0]


def test_a_print_flood_is_counted_not_the_students_error(zygote, folder):
    got = observe(zygote, folder, "flood")
    assert got.ok and got.value == 1  # no OSError: [Errno 27] File too large
    assert len(got.output) <= 4000 and got.output.startswith("line 0\nline 1\n")
    chars, lines = got.output.total
    assert lines == 200_000 and chars > 2_000_000


def test_short_output_is_whole_and_uncounted(zygote, folder):
    got = observe(zygote, folder, "chatty")
    assert got.output.count("\n") == 20 and getattr(got.output, "total", None) is None


@pytest.mark.parametrize("body, kind", [
    ("def f(:\n    pass\n", "SyntaxError"),
    ("import numpy_that_is_not_there\n", "ModuleNotFoundError"),
    ("x = undefined_name + 1\n", "NameError"),
])
def test_a_file_that_does_not_import_is_marked_with_its_line(zygote, tmp_path, body, kind):
    (tmp_path / "ex98_broken.py").write_text("A = 1\n" + body, encoding="utf-8")
    first = observe(zygote, tmp_path, "f", module="ex98_broken")
    assert first.error_type == kind and first.error["import_error"] is True
    assert 'File "ex98_broken.py", line 2' in first.error["traceback"]
    if kind != "ModuleNotFoundError":
        assert "^" in first.error["traceback"]  # a caret under the student's mistake


def test_a_loop_at_import_is_an_import_error(zygote, tmp_path):
    (tmp_path / "ex97_stuck.py").write_text("while True:\n    pass\n", encoding="utf-8")
    got = observe(zygote, tmp_path, "f", timeout=0.5, module="ex97_stuck")
    assert got.error_type == "Timeout" and got.error["import_error"] is True
    assert re.search(r'File "ex97_stuck\.py", line [12]', got.error["traceback"]), got.error["traceback"]


def test_the_worker_errors_carry_the_dump(zygote, folder):
    from tests.workers import call_in, worker_for

    worker = worker_for(zygote, folder)
    try:
        with pytest.raises(WorkerTimeout) as stuck:
            call_in(worker, "spin", 1, timeout=0.5)
        assert "ex99_demo.py" in stuck.value.dump and stuck.value.kind == "cpu"
        with pytest.raises(WorkerDied) as died:
            call_in(worker, "leave")
        assert died.value.status is not None
    finally:
        worker.close()


def test_where_from_dump_keeps_only_the_students_frames(tmp_path):
    (tmp_path / "ex01_windows.py").write_text("a = 1\nwhile True:\n    pass\n", encoding="utf-8")
    dump = ('Thread 0x01 (most recent call first):\n  File "/usr/lib/python3.11/threading.py", line 1 in wait\n\n'
            'Current thread 0x02 (most recent call first):\n'
            '  File "/tmp/submission/ex01_windows.py", line 3 in make_windows\n'
            '  File "/work/main/grader/probes/common.py", line 17 in call_function\n')
    fatal, where = where_from_dump("Fatal Python error: Segmentation fault\n\n" + dump, str(tmp_path))
    assert fatal == "Segmentation fault"
    assert where == '  File "ex01_windows.py", line 3, in make_windows\n    pass'


def test_an_import_stopped_by_a_spent_budget_says_so():
    """An import given only what was left of the exercise's budget says why, not "within 0 s"."""
    from grader.judge.student_errors import student_error_finding
    from grader.model.calls import Observation

    spent = Observation(ok=False, error={"type": "Timeout", "import_error": True, "traceback": "",
                                         "message": "0.000412 s（本练习的时间预算已用完 / the exercise's time budget is used up）"})
    finding = student_error_finding(spent, "windows()")
    # no line it was still running at: no "endless loop" either
    assert finding.en.endswith("within 0.00041 s (the exercise's time budget is used up)"), finding.en
    assert "本练习的时间预算已用完" in finding.zh
