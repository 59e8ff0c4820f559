"""A grader process killed from outside (kill -9, the OOM killer) costs no student a point.

- The zygote (in bubblewrap: the bwrap process and the sandbox with it): its workers die with
  it. The call running then is made again in a fresh worker from a zygote started anew at the
  next spawn, so the run carries on as if nothing happened. A zygote that cannot be started
  again (or ends again during that second try) is the grader's problem: `ZygoteGone`, and
  `grade exNN` writes no result and exits 3 saying so (`grade batch`: tests/cohort/test_batch.py).
- A worker: a SIGKILL the judge did not send gets the call once more in a fresh process;
  code that kills itself dies twice and is charged as before.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.judge.subjects import WorkerSubject
from grader.model.calls import Call
from grader.run.startup import worker_uid
from grader.sandbox import BUBBLEWRAP, WorkerDied, ZygoteGone
from grader.sandbox.bubblewrap import bwrap_path
from grader.sandbox.zygote import Zygote
from tests.in_process import grade
from tests.kit import EX01, KIT, make_course
from tests.processes import busy_sandbox, keep_killing
from tests.workers import worker_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork zygote")
needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="the official tier's bubblewrap")

SLOW = Call("common.call_function", ("make_windows", ([1, 2, 3],), {}))
STUDENT = "import time\ndef make_windows(tokens):\n    time.sleep(1.5)\n    return len(tokens)\n"


def kill_later(pid_of, delay: float) -> threading.Thread:
    """A thread that kills the process `pid_of()` names, `delay` s from now."""

    def kill() -> None:
        time.sleep(delay)
        os.kill(pid_of(), signal.SIGKILL)

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


def _imported(subject: WorkerSubject) -> None:
    assert subject.observe(Call("common.call_function", ("make_windows", ((),), {})), 60.0).ok


def _killed_mid_call(tmp_path, zygote, process_of) -> None:
    """A slow call whose process `process_of(zygote)` is killed from outside half a second in:
    the zygote is started again and the call made again, answered as the student's."""
    (tmp_path / "ex99_demo.py").write_text(STUDENT, encoding="utf-8")
    zygote.start()
    try:
        subject = WorkerSubject(zygote, tmp_path, "ex99_demo")
        _imported(subject)
        first = zygote.pid
        killer = kill_later(lambda: process_of(zygote), 0.5)
        observed = subject.observe(SLOW, 30.0)  # not WorkerDied, the student's (grader.judge.student_errors)
        killer.join()
        assert observed.ok and observed.value == 3, observed
        assert zygote.alive() and zygote.pid != first
        subject.close()
    finally:
        zygote.close()


def test_a_zygote_killed_mid_call_is_started_again_and_the_call_made_again(tmp_path):
    _killed_mid_call(tmp_path, Zygote(), lambda zygote: zygote.pid)


@needs_bwrap
def test_a_sandbox_killed_mid_call_is_started_again_and_the_call_made_again(tmp_path):
    # the bwrap process: the sandbox goes with it
    _killed_mid_call(tmp_path, Zygote(BUBBLEWRAP, uid=worker_uid(0) if os.geteuid() == 0 else None),
                     lambda zygote: zygote._handle.proc.pid)


@needs_bwrap
def test_a_sandbox_that_cannot_be_started_again_is_the_graders_problem(tmp_path, monkeypatch):
    (tmp_path / "ex99_demo.py").write_text(STUDENT, encoding="utf-8")
    zygote = Zygote(BUBBLEWRAP, uid=worker_uid(0) if os.geteuid() == 0 else None).start()
    try:
        subject = WorkerSubject(zygote, tmp_path, "ex99_demo")
        _imported(subject)
        monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))  # the next start finds no bubblewrap
        killer = kill_later(lambda: zygote._handle.proc.pid, 0.5)
        with pytest.raises(ZygoteGone):
            subject.observe(SLOW, 30.0)
        killer.join()
    finally:
        zygote.close()


def _grade_ex01_while(course: Path, folder: Path, out: Path, outside) -> subprocess.CompletedProcess:
    """`grade ex01 --submission FOLDER` (CI: official) in this process, while `outside(pid)` runs in
    a thread with this process's pid (the sandbox it starts is this process's descendant, a real
    process killed from outside); what `outside` raised is raised here once the run is over."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        done = pool.submit(outside, os.getpid())
        run = grade("--course", str(course), "--lang", "en", "ex01", "--submission", str(folder), "--format", "json",
                    "--out", str(out), env={"CI": "true"})
        done.result(timeout=300)
    return run


def _slow_honest(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    honest = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
    (folder / EX01).write_text("import time\ntime.sleep(3)\n" + honest, encoding="utf-8")
    return folder


@needs_bwrap
def test_grade_exnn_carries_on_when_its_sandbox_is_killed(tmp_path):
    course = make_course(tmp_path, timeout=10)

    def kill_its_sandbox(pid: int) -> None:
        os.kill(busy_sandbox(pid), signal.SIGKILL)  # while the student's file is imported

    run = _grade_ex01_while(course, _slow_honest(tmp_path), tmp_path / "result.json", kill_its_sandbox)
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    report = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert report["score"] == report["max_score"] > 0  # nothing charged for it


@needs_bwrap
def test_grade_exnn_says_so_and_exits_3_when_its_sandbox_cannot_be_kept(tmp_path):
    course = make_course(tmp_path, timeout=10)
    stop = threading.Event()

    def kill_every_sandbox(pid: int) -> None:
        busy_sandbox(pid)
        keep_killing(pid, stop)  # the sandbox, and every one started after it

    try:
        run = _grade_ex01_while(course, _slow_honest(tmp_path), tmp_path / "result.json", kill_every_sandbox)
    finally:
        stop.set()
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert "could not be started again" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "result.json").exists()  # no result charged for it


WORKER = """
import time
def slow(x):
    time.sleep(1.2)
    return x + 1
"""
REQUEST = {"probe": "common.call_function", "args": ("slow", (1,), {}), "kwargs": {}}


def kill_from_outside(worker, times: int) -> threading.Thread:
    """A thread that kills the worker's process 0.4 s into a call, `times` times, each a new process."""

    def kill() -> None:
        killed: set[int] = set()
        deadline = time.monotonic() + 60
        while len(killed) < times and time.monotonic() < deadline:
            pid = worker.pid
            if pid is None or pid in killed:
                time.sleep(0.01)
                continue
            time.sleep(0.4)
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def zygote():
    zygote = Zygote().start()
    yield zygote
    zygote.close()


def test_a_worker_killed_from_outside_gets_the_call_again(tmp_path, zygote):
    (tmp_path / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
    worker = worker_for(zygote, tmp_path)
    try:
        assert worker.run(REQUEST, 60.0)[0]["value"] == 2  # started, imported
        first, started = worker.pid, time.monotonic()
        killer = kill_from_outside(worker, 1)
        assert worker.run(REQUEST, 60.0)[0]["value"] == 2
        killer.join()
        assert worker.pid != first and time.monotonic() - started > 1.6  # a fresh process, the call again
        killer = kill_from_outside(worker, 2)  # killed again in its second try: not waited for more
        with pytest.raises(WorkerDied) as died:
            worker.run(REQUEST, 60.0)
        killer.join()
        assert os.WTERMSIG(died.value.status) == signal.SIGKILL
    finally:
        worker.kill()


def test_a_worker_killed_between_calls_gets_the_next_call_again(tmp_path, zygote):
    (tmp_path / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
    worker = worker_for(zygote, tmp_path)
    try:
        assert worker.run(REQUEST, 60.0)[0]["value"] == 2
        first = worker.pid
        os.kill(first, signal.SIGKILL)  # idle, between two checks
        time.sleep(0.5)
        assert worker.run(REQUEST, 60.0)[0]["value"] == 2
        assert worker.pid != first
    finally:
        worker.kill()


def test_no_process_for_a_worker_is_not_charged_to_the_student(tmp_path, monkeypatch):
    """The zygote refused a fork for 30 s (the user's process limit, held by something else):
    not the submission's doing. The subject says so once (NoProcess, a ZygoteGone), not per
    check; `grade exNN` writes no result and exits 3."""
    from grader.sandbox import NoProcess, zygote_main

    (tmp_path / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
    monkeypatch.setattr(zygote_main, "_fork_patiently", lambda patience=30.0: None)
    zygote = Zygote().start()
    try:
        subject = WorkerSubject(zygote, tmp_path, "ex99_demo")
        a_call = Call("common.call_function", ("slow", (1,), {}))
        with pytest.raises(NoProcess):
            subject.observe(a_call, 10.0)
        started = time.monotonic()
        with pytest.raises(NoProcess):  # not asked again
            subject.observe(a_call, 10.0)
        assert time.monotonic() - started < 5 and zygote.alive()  # not the call's 10 s again
    finally:
        zygote.close()

    course = make_course(tmp_path / "course")
    student = tmp_path / "student"
    (student / "exercises").mkdir(parents=True)
    (student / "exercises" / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    # a student's own run (the practice tier), in this process: its zygote is forked from this
    # process, the refusal with it
    single = grade("--course", str(course), "--lang", "en", "ex01", "--out", str(tmp_path / "result.txt"), cwd=student)
    assert single.returncode == 3 and "refused the grader a new process" in single.stderr, single.stderr
    assert "Traceback" not in single.stderr
    assert not (tmp_path / "result.txt").exists()
