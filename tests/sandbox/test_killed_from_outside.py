"""A grader process killed from outside (kill -9, the OOM killer) costs no student a point.

- The zygote: its workers die with it, so the checks running then would fail as "the process
  ended unexpectedly" and be charged to a submission that did nothing wrong. Instead the
  judge raises ZygoteGone: `grade exNN` writes no result and exits 3 (the grader could not
  finish), and `grade batch` records nothing of the students it held (tests/cohort/test_batch.py).
- A worker: a SIGKILL the judge did not send gets the call once more in a fresh process;
  code that kills itself dies twice and is charged as before.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader.judge.subjects import WorkerSubject
from grader.model.calls import Call
from grader.sandbox import Worker, WorkerDied, ZygoteGone
from grader.sandbox.zygote import Zygote
from tests.sandbox.as_user import as_user_prefix, needs_root
from tests.sandbox.test_attacks import EX01, GRADE, KIT, make_course

QUICK = Call("common.call_function", ("shift_pairs", ([1, 2, 3],), {}))
SLEEP = Call("common.call_function", ("make_windows", ([1, 2, 3],), {}))
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork zygote")


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def zygote_of(pid: int, timeout: float = 120.0) -> int:
    """The zygote among `pid`'s children: the one with a child (a worker) of its own; the
    judges and the uid block's watchdog start none."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in children(pid):
            if children(child):
                return child
        time.sleep(0.02)
    raise AssertionError(f"no zygote with a worker under {pid}")


def test_a_worker_killed_with_its_zygote_is_not_the_students_doing(tmp_path):
    (tmp_path / EX01).write_text("import time\ndef shift_pairs(tokens):\n    return 1\n"
                                 "def make_windows(tokens):\n    time.sleep(60)\n", encoding="utf-8")
    zygote = Zygote().start()
    try:
        assert zygote.alive()
        subject = WorkerSubject(zygote, tmp_path, "ex01_windows")
        assert subject.observe(QUICK, 60.0).ok  # the zygote is ready, the worker has imported the file
        killer = os.fork()
        if killer == 0:  # kills the zygote while the next call sleeps in the worker
            try:
                time.sleep(0.5)
                os.kill(zygote.pid, signal.SIGKILL)
            finally:
                os._exit(0)
        with pytest.raises(ZygoteGone):
            subject.observe(SLEEP, 30.0)  # not WorkerDied, the student's (grader.judge.student_errors)
        os.waitpid(killer, 0)
        assert not zygote.alive()
        with pytest.raises(ZygoteGone):  # asking it for another worker says the same, at once
            WorkerSubject(zygote, tmp_path, "ex01_windows").observe(SLEEP, 30.0)
    finally:
        zygote.close()


def test_grade_exnn_says_so_and_exits_3(tmp_path):
    course = make_course(tmp_path)
    folder = tmp_path / "work"
    folder.mkdir()
    honest = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
    (folder / EX01).write_text("import time\ntime.sleep(5)\n" + honest, encoding="utf-8")
    proc = subprocess.Popen(GRADE + ["--course", str(course), "--lang", "en", "ex01", "--submission", str(folder),
                                     "--format", "json", "--out", str(tmp_path / "result.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        os.kill(zygote_of(proc.pid), signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 3, (out, err)
    assert "killed from outside" in err and "Traceback" not in err
    assert not (tmp_path / "result.json").exists()  # no result charged for it


WORKER = """
import time
def slow(x):
    time.sleep(1.2)
    return x + 1
"""


def kill_from_outside(worker: Worker, times: int, which: str) -> threading.Thread:
    """A thread that kills the worker's process (or its child) 0.4 s into a call,
    `times` times, each a new process."""

    def kill() -> None:
        killed: set[int] = set()
        deadline = time.monotonic() + 60
        while len(killed) < times and time.monotonic() < deadline:
            pid = worker.pid
            if pid is None or pid in killed:
                time.sleep(0.01)
                continue
            time.sleep(0.4)
            target = pid if which == "worker" else (children(pid) or [pid])[0]
            os.kill(target, signal.SIGKILL)
            killed.add(pid)

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def zygote():
    zygote = Zygote().start()
    yield zygote
    zygote.close()


@pytest.mark.parametrize("which", ["worker", "its child"])  # pid 1 of its PID namespace runs the code
def test_a_worker_killed_from_outside_gets_the_call_again(tmp_path, zygote, which):
    (tmp_path / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
    worker = Worker(zygote, str(tmp_path), "ex99_demo")
    try:
        request = {"probe": "common.call_function", "args": ("slow", (1,), {}), "kwargs": {}}
        assert worker.run(request, 60.0)["value"] == 2  # started, imported
        first, started = worker.pid, time.monotonic()
        killer = kill_from_outside(worker, 1, which)
        assert worker.run(request, 60.0)["value"] == 2
        killer.join()
        assert worker.pid != first and time.monotonic() - started > 1.6  # a fresh process, the call again
        killer = kill_from_outside(worker, 2, which)  # killed again in its second try: not waited for more
        with pytest.raises(WorkerDied) as died:
            worker.run(request, 60.0)
        killer.join()
        assert os.WTERMSIG(died.value.status) == signal.SIGKILL
    finally:
        worker.kill()


def test_a_worker_killed_between_calls_gets_the_next_call_again(tmp_path, zygote):
    (tmp_path / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
    worker = Worker(zygote, str(tmp_path), "ex99_demo")
    try:
        request = {"probe": "common.call_function", "args": ("slow", (1,), {}), "kwargs": {}}
        assert worker.run(request, 60.0)["value"] == 2
        first = worker.pid
        os.kill(first, signal.SIGKILL)  # idle, between two checks
        time.sleep(0.5)
        assert worker.run(request, 60.0)["value"] == 2
        assert worker.pid != first
    finally:
        worker.kill()


AS_USER = """
import sys, time
sys.path.insert(0, sys.argv[2])
from grader.sandbox import Worker
from grader.sandbox.zygote import Zygote
from tests.sandbox.test_killed_from_outside import kill_from_outside
zygote = Zygote().start()
worker = Worker(zygote, sys.argv[1], "ex99_demo")
request = {"probe": "common.call_function", "args": ("slow", (1,), {}), "kwargs": {}}
answer = worker.run(request, 60.0)
assert answer.get("value") == 2, answer
first = worker.pid
killer = kill_from_outside(worker, 1, "its child")
print(worker.run(request, 60.0)["value"], worker.pid != first)
killer.join()
worker.kill()
zygote.close()
"""


@needs_root
def test_as_a_user_a_worker_killed_from_outside_gets_the_call_again():
    """As an ordinary user the code runs in the worker's child (pid 1 of a PID namespace the
    worker made): the worker ends as that child ended, a SIGKILL included, so the zygote's
    report is of a kill from outside and the call is made again (it was charged as an exit 0)."""
    scratch = Path(tempfile.mkdtemp(prefix="grade-killed-", dir="/tmp"))  # reachable by the user
    try:
        folder = scratch / "work"
        folder.mkdir()
        (folder / "ex99_demo.py").write_text(WORKER, encoding="utf-8")
        for path in (scratch, folder, folder / "ex99_demo.py"):
            path.chmod(0o755)
        run = subprocess.run([*as_user_prefix(scratch), sys.executable, "-c", AS_USER, str(folder), str(KIT)],
                             cwd="/", env={"PATH": os.environ.get("PATH", ""), "HOME": str(scratch)},
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and run.stdout.split() == ["2", "True"], run.stdout + run.stderr[-3000:]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


REFUSING = ("import grader.sandbox.zygote_main as z; z._fork_patiently = lambda patience=30.0: None; "
            "from grader.commands.main import entry; entry()")  # a zygote the system gives no process


def test_no_process_for_a_worker_is_not_charged_to_the_student(tmp_path, monkeypatch):
    """The zygote refused a fork for 30 s (the user's process limit, held by something else):
    not the submission's doing. The subject says so once (NoProcess, a ZygoteGone), not per
    check; `grade exNN` writes no result and exits 3; `grade batch` records no score for the
    student and says to run it again."""
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
        assert time.monotonic() - started < 1 and zygote.alive()
    finally:
        zygote.close()

    course = make_course(tmp_path / "course")
    student = tmp_path / "cohort" / "alice"
    student.mkdir(parents=True)
    (student / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    single = subprocess.run([sys.executable, "-c", REFUSING, "--course", str(course), "--lang", "en", "ex01", "--submission",
                             str(student), "--out", str(tmp_path / "result.txt")],
                            capture_output=True, text=True, timeout=300, cwd=KIT)
    assert single.returncode == 3 and "refused the grader a new process" in single.stderr, single.stderr
    assert not (tmp_path / "result.txt").exists()
    batch = subprocess.run([sys.executable, "-c", REFUSING, "--course", str(course), "--lang", "en", "batch",
                            str(tmp_path / "cohort"), "--out", str(tmp_path / "out"), "--no-progress"],
                           capture_output=True, text=True, timeout=300, cwd=KIT)
    assert batch.returncode == 3 and "alice" in batch.stderr and "refused the grader a new process" in batch.stderr
    assert "Traceback" not in batch.stderr, batch.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()  # no score charged for it; a rerun grades alice
