"""几个评分同时跑：互不干扰；kill -9 不留进程。

Several `grade` runs at once on one machine keep their own sandboxes (bubblewrap: each judge
slot's workers in a PID namespace of their own, whatever uid they run as) and their own
processes: each run's sweep reaches only its own sandbox, every score comes out right. kill -9
of one of them leaves none of its processes behind (the judges and the sandboxes die with it). As
an ordinary user (the sandboxes in user namespaces of their own) the same holds: runs at once
keep every score, and kill -9 of one leaves none of its processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cohorts import batch_here, cohort
from tests.sandbox.as_user import as_user_prefix, needs_root, user_env
from tests.kit import EX01, EX02, GRADE, KIT, make_course


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    # Generous limits: several runs at once on a busy machine must lose nothing to time,
    # nor to each other's sweeps.
    return make_course(tmp_path_factory.mktemp("course"), timeout=30)


def _every_score_right(out: Path, n: int, run) -> None:
    """OUT's gradebook holds n students, every third honest with full marks, the others 0."""
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(book["students"]) == n
    full = sum(e["max_score"] for e in book["exercises"])
    for name, entry in book["students"].items():
        expected = full if int(name[1:]) % 3 == 0 else 0  # every third honest, the others wrong or stubs
        crashes = [c["message"] for e in entry["exercises"] for c in e["checks"] if c["kind"] == "crash"]
        assert entry["score"] == expected, (run, name, crashes)


def test_runs_at_once_keep_every_score_and_kill9_of_one_leaves_no_process(course, tmp_path):
    """Three batches and a `grade all` at once; the runs end at different times, so one run's
    clean-up happens while the others' workers are busy. The third batch (two judges, in a
    session of its own) is killed with -9 once it has graded a student: none of its processes
    stays (the judges and the sandboxes die with it, not only the batch), the others keep
    every score, and the same command again (OUT's lock died with the batch) completes its
    gradebook, every score right."""
    runs = []
    for i, (n, jobs) in enumerate(((2, "1"), (3, "2"))):  # each with an honest student; each ends at its own time
        folder = cohort(tmp_path / f"cohort{i}", n, slow=0.3)
        cmd = GRADE + ["--course", str(course), "batch", str(folder), "--out", str(tmp_path / f"out{i}"),
                       "--no-progress", "-j", jobs]
        runs.append((subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), n, i))
    folder = cohort(tmp_path / "cohort2", 4, slow=1.0)
    out = tmp_path / "out2"
    killed = subprocess.Popen(GRADE + ["--course", str(course), "batch", str(folder), "--out", str(out),
                                       "--no-progress", "-j", "2"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    single = tmp_path / "single"
    single.mkdir()
    for name in (EX01, EX02):
        (single / name).write_text((KIT / "solutions" / name).read_text(encoding="utf-8"), encoding="utf-8")
    alone = subprocess.Popen(GRADE + ["--course", str(course), "all", "--submission", str(single), "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((out / "students").glob("*.json")):
        time.sleep(0.05)
    assert len(_session_processes(killed.pid)) >= 4  # the batch, its zygote, two judges (and workers)
    os.kill(killed.pid, signal.SIGKILL)  # the batch alone, not its process group
    killed.wait()
    deadline = time.monotonic() + 15
    while _session_processes(killed.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _session_processes(killed.pid)
    for proc, n, i in runs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        _every_score_right(tmp_path / f"out{i}", n, i)
    report, err = alone.communicate(timeout=600)
    report = json.loads(report)
    assert report["score"] == report["max_score"] > 0, err[-2000:]
    rerun = batch_here(course, folder, out)
    assert rerun.returncode == 0, rerun.stderr[-2000:]  # the lock of OUT died with the batch
    _every_score_right(out, 4, "rerun")


def _live_processes():
    """(pid, the fields of /proc/pid/stat after the name, effective uid) of every process not a zombie."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/status") as handle:
                    uid = next(int(line.split()[2]) for line in handle if line.startswith("Uid:"))
            except (OSError, StopIteration):
                continue
            if fields[0] != "Z":
                yield int(entry), fields, uid


def _session_processes(sid: int) -> set[int]:
    return {pid for pid, fields, _ in _live_processes() if int(fields[3]) == sid}  # field 6: the session id


def _processes_of(uid: int) -> set[int]:
    return {pid for pid, _, owner in _live_processes() if owner == uid}


@needs_root
def test_as_an_ordinary_user_runs_at_once_keep_every_score_and_kill9_leaves_nothing():
    """The same as ordinary users: no uid leases then, each run's workers in their own user and
    PID namespaces. As uid 61999, two batches and a `grade all` at once, while a batch run as
    uid 61998, its students stuck in an endless import, is killed with -9: no process of that
    uid stays (workers included, wherever their session), every score of the others is right."""
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="grade-asuser-", dir="/tmp"))
    prefix, killer = as_user_prefix(scratch), as_user_prefix(scratch, uid=61998)
    (scratch / "runs").mkdir()
    env = user_env(scratch / "runs", GRADE_LANG="en")
    course = make_course(scratch, timeout=30)  # pytest's tmp is root's alone
    exe = [str(Path(sys.executable).parent / "grade"), "--course", str(course)]

    def start(*args: str, who: list[str] = prefix, output=subprocess.PIPE) -> subprocess.Popen:
        return subprocess.Popen([*who, *exe, *args], cwd="/", env=env, stdout=output, stderr=output, text=True)

    try:
        folders = [cohort(scratch / f"cohort{i}", n, slow=s) for i, (n, s) in enumerate(((2, 0.3), (3, 0.3), (3, 600)))]
        for path in scratch.rglob("*"):
            if not path.is_symlink():  # readable by the users (the scripts stay executable)
                path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o644))
        (scratch / "runs").chmod(0o777)
        outs = [scratch / "runs" / f"out{i}" for i in range(3)]
        assert not _processes_of(61998)
        killed = start("batch", str(folders[2]), "--out", str(outs[2]), "--no-progress", "-j", "2", who=killer,
                       output=subprocess.DEVNULL)  # what it leaves behind would hold a pipe open
        runs = [(start("batch", str(folders[i]), "--out", str(outs[i]), "--no-progress", "-j", jobs), n, i)
                for i, n, jobs in ((0, 2, "1"), (1, 3, "2"))]
        alone = start("all", "--submission", str(folders[0] / "s00"), "--format", "json")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_processes_of(61998)) < 6:
            time.sleep(0.05)
        # the batch, its zygote, two judges, and a worker per judge importing forever (each a
        # PID namespace's parent and init)
        assert len(_processes_of(61998)) >= 6
        time.sleep(1)  # the workers well into the student's import, past their own start
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        deadline = time.monotonic() + 15
        while _processes_of(61998) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _processes_of(61998)
        for proc, n, i in runs:
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-3000:]
            _every_score_right(outs[i], n, i)
        out, err = alone.communicate(timeout=600)
        report = json.loads(out)
        assert report["score"] == report["max_score"] > 0, err[-2000:]
    finally:
        for pid in _processes_of(61998):  # whatever a failure left
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(scratch, ignore_errors=True)
