"""Workers: student code runs in a worker process (forked, or spawned: both); time limits, crashes and output."""

from __future__ import annotations

import os
import sys

import pytest

from grader.sandbox import WorkerDied, WorkerTimeout, Zygote
from tests.workers import call_in, worker_for

STUDENT = '''
import os, time
def add(a, b):
    return a + b
def loop():
    while True:
        pass
def die():
    os._exit(3)
def shout():
    print("x" * 100000)
    return 1
def where():
    return os.getcwd()
def nested():
    return helper()
def helper():
    raise ValueError("bad value")
def fork_and_return():
    return os.fork() == 0  # the child returns too, into the worker's loop
def oom_score_adj(lower_to=None):
    if lower_to is not None:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(lower_to))
    with open("/proc/self/oom_score_adj") as handle:
        return int(handle.read())
'''


@pytest.fixture(scope="module")
def zygote(worker_mode):  # every test here runs with forked workers and with spawned ones
    z = Zygote().start()
    yield z
    z.close()


@pytest.fixture(scope="module")
def worker(zygote, tmp_path_factory):
    """One worker of STUDENT for the module's tests in each mode: each test makes its own calls,
    the worker serving them whatever the calls before did (a time-out, an exit, a fork)."""
    folder = tmp_path_factory.mktemp("student")
    (folder / "ex99_demo.py").write_text(STUDENT, encoding="utf-8")
    w = worker_for(zygote, folder)
    yield w
    w.close()


def run(worker, name, *args, timeout=5.0):
    return call_in(worker, name, *args, timeout=timeout)


def test_a_call_returns_plain_data(worker):
    assert run(worker, "add", 2, 3) == {"ok": True, "value": 5, "output": ""}


def test_an_infinite_loop_is_stopped_and_the_next_call_still_runs(worker):
    assert run(worker, "add", 0, 0)["value"] == 0  # imported first: the 0.5 s below is the loop's alone
    with pytest.raises(WorkerTimeout) as stopped:
        run(worker, "loop", timeout=0.5)
    # stopped for the CPU it used at its limit, however busy the machine (not by the backstop)
    assert stopped.value.kind == "cpu"
    assert run(worker, "add", 1, 1)["value"] == 2


def test_a_workers_folder_is_removed_once_its_process_has_ended(zygote, tmp_path):
    """A practice-tier worker works in a folder of its own, made for each of its processes and
    removed once that process has ended (the judge kills workers; they never clean up after
    themselves): at a time limit, and when the worker is closed after its last call."""
    (tmp_path / "ex99_demo.py").write_text(STUDENT, encoding="utf-8")
    w = worker_for(zygote, tmp_path)
    try:
        first = run(w, "where")["value"]
        assert os.path.isdir(first) and os.path.basename(first).startswith("grade-worker-")
        with pytest.raises(WorkerTimeout):
            run(w, "loop", timeout=0.5)
        assert not os.path.exists(first)
        second = run(w, "where")["value"]
        assert second != first and os.path.isdir(second)
    finally:
        w.close()
    assert not os.path.exists(second)


def test_a_worker_that_exits_is_reported(worker):
    with pytest.raises(WorkerDied):
        run(worker, "die")
    assert run(worker, "add", 1, 2)["value"] == 3


def test_output_is_captured_and_capped(worker):
    answer = run(worker, "shout")
    assert answer["ok"] and 0 < len(answer["output"]) <= 4001


def test_what_the_import_printed_comes_with_the_first_answer(zygote, tmp_path):
    (tmp_path / "ex99_demo.py").write_text('print("hello from the import")\ndef add(a, b):\n    return a + b\n')
    w = worker_for(zygote, tmp_path)
    try:
        assert "hello from the import" in run(w, "add", 1, 2)["output"]
        assert run(w, "add", 1, 2)["output"] == ""  # once
    finally:
        w.close()


def test_only_the_students_frames_are_shown(worker):
    answer = run(worker, "nested")
    error = answer["error"]
    assert error["type"] == "ValueError" and error["message"] == "bad value"
    assert "ex99_demo.py" in error["traceback"] and "helper" in error["traceback"]
    assert "grader" not in error["traceback"]


def test_a_missing_file_is_reported_not_raised(zygote, tmp_path):
    w = worker_for(zygote, tmp_path, "ex98_absent")
    try:
        answer = run(w, "add", 1, 2)
    finally:
        w.close()
    assert answer["error"]["type"] == "MissingSubmissionFile"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="oom_score_adj is Linux's")
def test_when_memory_runs_out_the_kernel_kills_a_worker_first(worker):
    # Not the zygote or a judge (the batch would stop for everyone): the student's own worker.
    assert run(worker, "oom_score_adj")["value"] == 1000
    lowered = run(worker, "oom_score_adj", 0)
    if os.geteuid() != 0:  # lowering it takes a privilege a worker does not have (as root: its own process)
        assert not lowered["ok"], lowered
        assert run(worker, "oom_score_adj")["value"] == 1000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_child_the_students_code_forked_never_answers_for_the_worker(worker):
    # An answer from the child (True here) would put the worker's own answers out of step.
    for _ in range(3):
        assert run(worker, "fork_and_return") == {"ok": True, "value": False, "output": ""}
    assert run(worker, "add", 1, 2)["value"] == 3
