"""The official tier on Linux: workers inside bubblewrap see, reach and leave nothing they must not.

Each test runs a student's module in a real bubblewrap sandbox and reads what the module saw,
as the module itself reports it (the worker is the student's: here that is the point).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from grader.model.course import load_course
from grader.run.startup import data_folders, secret_paths, worker_uid
from grader.sandbox import BUBBLEWRAP, IsolationUnavailable, Zygote
from grader.sandbox.bubblewrap import bwrap_path
from tests.inside import PROBE
from tests.workers import call_in, worker_for, write_module

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                reason="bubblewrap (the official tier) is Linux's; .ci/run installs it")


@pytest.fixture(scope="module")
def course():
    return load_course()


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cohort")
    (folder / "other_student").mkdir()
    (folder / "other_student" / "ex01_windows.py").write_text("SECRET = 1\n")
    return folder


@pytest.fixture(scope="module")
def under_tmp(tmp_path_factory):
    """A data folder under the host's /tmp (where CI keeps a venv, Gradescope's tests their kit)."""
    folder = tmp_path_factory.mktemp("data-under-tmp")
    (folder / "corpus.txt").write_text("to be or not to be\n")
    for path in (folder, *folder.parents):
        if str(path).startswith("/tmp/"):
            path.chmod(path.stat().st_mode | 0o755)  # pytest's are root's alone; the workers' uid reads it
    (folder / "corpus.txt").chmod(0o644)
    return folder


@pytest.fixture(scope="module")
def zygote(course, cohort, under_tmp):
    z = Zygote(BUBBLEWRAP, uid=worker_uid(0) if os.geteuid() == 0 else None,
               unseen=[*secret_paths(course), str(cohort)], data=[*data_folders(course), str(under_tmp)]).start()
    yield z
    z.close()


@pytest.fixture
def worker(zygote, tmp_path):
    w = worker_for(zygote, write_module(tmp_path, PROBE))
    yield w
    w.close()


def test_the_reference_the_checks_and_other_students_are_not_there(worker, course, cohort):
    wanted = [str(course.solutions_dir / "ex01_windows.py"), str(course.unit("ex01") / "checks.py"),
              str(course.root / "course.toml"),
              str(cohort / "other_student" / "ex01_windows.py"), *secret_paths(course)]
    seen = call_in(worker, "exists", wanted)["value"]
    assert not any(seen.values()), [p for p, there in seen.items() if there]


def test_the_network_cannot_be_reached(worker):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    try:
        assert socket.create_connection(server.getsockname(), timeout=2)  # open from here
        assert call_in(worker, "connect", server.getsockname()[1])["value"] != "connected"
    finally:
        server.close()


def test_the_judges_processes_cannot_be_seen_or_signalled(worker):
    seen = call_in(worker, "processes")["value"]
    assert os.getpid() not in seen and len(seen) <= 3, seen  # the zygote (1) and the worker
    assert call_in(worker, "signal_pid", os.getpid(), 0)["value"] == "ProcessLookupError"


def test_the_zygote_can_be_neither_killed_nor_read(worker, zygote):
    assert call_in(worker, "signal_pid", 1, 9)["value"] in ("sent", "PermissionError")
    assert call_in(worker, "read_memory", 1)["value"] == "PermissionError"
    assert zygote.alive()
    assert call_in(worker, "processes")["value"][0] == 1  # still there, and still forking


@pytest.mark.skipif(os.geteuid() != 0, reason="as a user the workers keep the user's own uid")
def test_as_root_the_worker_is_an_unprivileged_user(worker):
    ids = call_in(worker, "who")["value"]
    assert ids["uid"] == ids["euid"] == worker_uid(0) and ids["gid"] != 0
    assert call_in(worker, "write", "/usr/x")["value"] in ("PermissionError", "OSError")


@pytest.mark.parametrize("name", ["ptrace", "keyctl", "shmget", "unshare"])
def test_the_syscall_filter_refuses_what_reaches_past_the_process(worker, name):
    assert call_in(worker, "syscall", name)["value"] == "EPERM"


def test_nothing_a_worker_started_or_wrote_outlives_it(zygote, tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        write_module(tmp_path / name, PROBE)
    first = worker_for(zygote, tmp_path / "a")
    try:
        call_in(first, "leave_behind")
    finally:
        first.close()
    second = worker_for(zygote, tmp_path / "b")
    try:
        seen = call_in(second, "look_around")["value"]
    finally:
        second.close()
    # what the first worker wrote (tests.inside: /tmp/left.txt, /dev/shm/left); a kit checked out
    # under /tmp is bound into the view and walked too, its own files named however they are
    assert not [f for f in seen["files"] if os.path.basename(f) in ("left.txt", "left")], seen
    assert len(seen["processes"]) <= 2, seen  # the zygote and this worker: the first one's child is gone


def test_what_lies_under_the_hosts_tmp_is_bound_inside_the_sandboxs_tmp(zygote, under_tmp, tmp_path):
    """The sandbox's own /tmp does not hide an interpreter, a kit or data kept under the host's
    /tmp; and emptying /tmp after a worker leaves them for the next one."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        write_module(tmp_path / name, PROBE)
    for name in ("a", "b"):
        worker = worker_for(zygote, tmp_path / name)
        try:
            assert call_in(worker, "read", str(under_tmp / "corpus.txt"))["value"] == "to be or not to be\n"
        finally:
            worker.close()


def test_a_tree_too_deep_to_walk_is_removed_and_stops_nothing(zygote, tmp_path):
    (tmp_path / "a").mkdir()
    first = worker_for(zygote, write_module(tmp_path / "a", PROBE))
    try:
        assert call_in(first, "dig", 4000, timeout=60)["value"] == 4000
    finally:
        first.close()
    pid = zygote.pid
    second = worker_for(zygote, write_module(tmp_path / "a", PROBE))
    try:
        folders, own = call_in(second, "workdirs")["value"]
        assert folders == [own.split("/")[2]]  # the deep one went with its worker
    finally:
        second.close()
    assert zygote.pid == pid  # swept by the same zygote: it did not end on it


def test_emptying_tmp_keeps_the_sandboxs_own_folders_and_nothing_a_worker_added(tmp_path):
    from grader.sandbox import sweep

    (tmp_path / "ci" / "venv").mkdir(parents=True)
    kept = sweep.entries([str(tmp_path)])  # as the zygote finds /tmp before any worker
    (tmp_path / "left.txt").write_text("x")
    (tmp_path / "mine").mkdir()
    sweep.empty([str(tmp_path)], keep=kept)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["ci", "ci/venv"]


def test_the_self_check_refuses_to_start_when_a_secret_is_visible(course):
    visible = data_folders(course)[0]  # bound for the workers: a secret there would be readable
    with pytest.raises(IsolationUnavailable) as refused:
        Zygote(BUBBLEWRAP, unseen=[visible], data=data_folders(course)).start()
    assert visible in str(refused.value)


def test_without_bubblewrap_official_grading_stops_before_any_student(tmp_path, root):
    (tmp_path / "ex01_windows.py").write_text((root / "solutions" / "ex01_windows.py").read_text())
    env = {**os.environ, "PATH": str(tmp_path / "nothing"), "CI": "true", "GRADE_LANG": "en"}
    done = subprocess.run([sys.executable, "-m", "grader", "ex01", "--submission", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 3, done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "--isolation container" in done.stderr
    assert "Traceback" not in done.stderr and "✓" not in done.stdout


def test_a_judge_killed_while_its_sandbox_runs_leaves_no_file_behind(tmp_path):
    """What bubblewrap says on its way is kept in a file with no name: a judge killed (kill -9)
    while its sandbox runs leaves nothing in its temporary folder, as one that ends well."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = ("import time\nfrom grader.sandbox import BUBBLEWRAP, Zygote\n"
            "Zygote(BUBBLEWRAP).start()\nprint('ready', flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(scratch)})
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert os.listdir(scratch) == []  # while it runs, too
    finally:
        proc.kill()
        proc.wait()
    assert os.listdir(scratch) == []


def test_what_bubblewrap_said_is_the_reason_given_when_it_cannot_build_the_sandbox():
    with pytest.raises(IsolationUnavailable) as refused:
        Zygote(BUBBLEWRAP, data=["/nonexistent/folder"]).start()
    assert "Can't find source path /nonexistent/folder" in refused.value.text("en")
