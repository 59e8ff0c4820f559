"""The container tier (`--isolation container`): as root, the workers drop to an unprivileged uid
that cannot read the reference, the checks or the course secret, and the modes that keep them
so are proved as that uid before any submission runs.

- While the reference is readable by every user (a checkout as cloned), `grade all --submission
  --isolation container` grades nothing: exit 3, and the `chmod -R go-rwx …` that closes it.
- Where that uid cannot read what the workers need (here, the lesson's data), it grades nothing
  either: exit 3, naming it (a worker's reads and imports would fail, charged to the student).
- On a copy of the kit whose secrets are closed, it grades: a correct exercise at full marks, and
  a student who reads the reference finds it closed to its uid (65533).

Run as root (the tier's user) in a mount namespace where other uids can read the interpreter
(tests/sandbox/as_user.py: pyenv installs it under /root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox.container import WORKER_UID
from tests.kit import EX01, EX02, GRADE, KIT
from tests.sandbox.as_user import as_user_prefix, needs_root, passable_folder

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux"), needs_root]

SOURCES = ["grader", "exercises", "solutions", "datasets", "course.toml", "pyproject.toml"]
THIEF = '''
import os
try:
    with open({path!r}) as _handle:
        exec(_handle.read())
    _outcome = "read it"
except OSError as err:
    _outcome = type(err).__name__
raise RuntimeError(f"uid {{os.getuid()}}: {{_outcome}}")
'''


def _grade_all(place: Path, folder: Path, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """`grade all --submission FOLDER --isolation container` as root (`place` keeps the prefix's script)."""
    return subprocess.run([*as_user_prefix(place, None), *GRADE, "--lang", "en", "all", "--submission", str(folder),
                           "--isolation", "container", "--format", "json"],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def place():
    """Not under /tmp or pytest's folders (their owner's alone): where every uid may pass."""
    folder = passable_folder("grade-container-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _env(place: Path, **more) -> dict:
    return {**os.environ, "XDG_CACHE_HOME": str(place / "cache"), **more}  # no cache of the suite's, root's alone


def test_refused_with_the_way_out_while_the_reference_is_readable(place, tmp_path):
    assert os.stat(KIT / "solutions").st_mode & 0o005, "the checkout's reference is expected readable by all"
    (tmp_path / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    run = _grade_all(place, tmp_path, _env(place), tmp_path)
    assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
    command = run.stderr.split("The way out: ")[-1].split()
    assert command[:3] == ["chmod", "-R", "go-rwx"] and str(KIT / "solutions") in command, run.stderr
    assert "Traceback" not in run.stderr and not run.stdout.strip()


@pytest.fixture(scope="module")
def closed_kit(place):
    """A copy of the kit where every uid may read what the workers need, and whose secrets are
    closed as an image's are (`grade close-secrets`)."""
    kit = place / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade*", "answers.bin")
    for name in SOURCES:
        source = KIT / name
        if source.is_dir():
            shutil.copytree(source, kit / name, ignore=ignore)
        else:
            shutil.copy2(source, kit / name)
    for folder, _, files in os.walk(kit):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    closing = subprocess.run([*GRADE, "close-secrets"], capture_output=True, text=True, cwd=kit, timeout=300,
                             env=_env(place, PYTHONPATH=str(kit)))  # the way an image closes them
    assert closing.returncode == 0 and str(kit / "solutions") in closing.stdout, closing.stdout + closing.stderr
    return kit


def _student(place: Path, name: str, ex01: str) -> Path:
    student = place / name
    student.mkdir()
    (student / EX01).write_text(ex01, encoding="utf-8")
    (student / EX02).write_text((KIT / "solutions" / EX02).read_text(encoding="utf-8"), encoding="utf-8")
    return student


def test_refused_naming_what_the_workers_cannot_read(place, closed_kit):
    data = place / "closed-data"
    shutil.copytree(KIT / "datasets", data)
    data.chmod(0o700)
    student = _student(place, "honest", (KIT / "solutions" / EX01).read_text(encoding="utf-8"))
    run = _grade_all(place, student, _env(place, PYTHONPATH=str(closed_kit), GPT_COURSE_DATA=str(data)), closed_kit)
    assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
    assert "cannot read what they need" in run.stderr and str(data) in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not run.stdout.strip()


def test_on_closed_modes_it_grades_and_the_worker_cannot_read_the_reference(place, closed_kit):
    student = _student(place, "thief", THIEF.format(path=str(closed_kit / "solutions" / EX01)))
    env = _env(place, PYTHONPATH=str(closed_kit), PYTHONDONTWRITEBYTECODE="1")
    run = _grade_all(place, student, env, closed_kit)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    report = json.loads(run.stdout)
    by_id = {e["id"]: e for e in report["exercises"]}
    assert by_id["ex02"]["score"] == by_id["ex02"]["max_score"] > 0, [
        c["message"] for c in by_id["ex02"]["checks"] if not c["passed"]]
    assert by_id["ex01"]["score"] == 0
    told = " ".join(c["message"] for c in by_id["ex01"]["checks"])
    assert f"uid {WORKER_UID}: PermissionError" in told, told


@pytest.fixture(scope="module")
def container_zygote():
    """The container tier's own zygote, started in this process, for the workers of the tests below."""
    from grader.sandbox import CONTAINER, Zygote

    zygote = Zygote(CONTAINER, uid=WORKER_UID).start()
    yield zygote
    zygote.close()


def test_a_worker_runs_as_its_uid_under_the_syscall_filter(container_zygote, tmp_path):
    """In-process, in the container tier's own zygote: the worker's uid, and what the filter refuses.
    The filter is built by the zygote, as root: a worker loads it having imported nothing since it
    dropped to a uid that may not read the interpreter's files (pyenv's, here)."""
    from tests.inside import PROBE
    from tests.workers import call_in, worker_for, write_module

    worker = worker_for(container_zygote, write_module(tmp_path, PROBE))
    try:
        assert call_in(worker, "who")["value"]["uid"] == WORKER_UID
        for name in ("ptrace", "keyctl", "unshare"):
            assert call_in(worker, "syscall", name)["value"] == "EPERM", name
    finally:
        worker.close()


LEAVER = '''
import os, time

def leave(mark):
    """A process that outlives the worker, and files where every uid may write."""
    for folder in ("/tmp", "/dev/shm", "/var/tmp"):
        try:
            with open(os.path.join(folder, mark), "w") as handle:
                handle.write("mine")
        except OSError:
            pass
    child = os.fork()
    if child == 0:
        os.setsid()
        while True:
            time.sleep(0.1)
    return child
'''


def test_nothing_a_worker_started_or_wrote_outlives_it(container_zygote, tmp_path):
    """What a worker left is gone once the worker is closed, while its zygote serves on."""
    from tests.workers import call_in, worker_for, write_module

    mark = "left-" + os.urandom(6).hex()
    worker = worker_for(container_zygote, write_module(tmp_path, LEAVER))
    try:
        child = call_in(worker, "leave", mark)["value"]
        assert Path(f"/proc/{child}").exists() and Path("/tmp", mark).exists()
    finally:
        worker.close()  # swept: every process of its uid, what its uid owns in the writable folders
    assert not [f for f in ("/tmp", "/dev/shm", "/var/tmp") if os.path.lexists(os.path.join(f, mark))]
    try:
        state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z"), state


def test_the_sweep_removes_only_what_its_uid_owns(tmp_path):
    from grader.sandbox import sweep

    mine, other = tmp_path / "mine", tmp_path / "other"
    (mine / "sub").mkdir(parents=True)
    os.symlink("/etc", mine / "sub" / "link")  # removed, never followed
    other.mkdir()
    for path in (mine, mine / "sub"):
        os.chown(path, WORKER_UID, WORKER_UID)
    os.lchown(mine / "sub" / "link", WORKER_UID, WORKER_UID)
    os.chown(other, WORKER_UID - 1, WORKER_UID - 1)
    sweep.remove_owned(WORKER_UID, [str(tmp_path)])
    assert not mine.exists() and other.is_dir() and os.path.isdir("/etc")


COPIER = '''
import glob
for path in glob.glob({cohort!r} + "/*/ex01_windows.py") + glob.glob({out!r} + "/staged/*/ex01_windows.py"):
    try:
        exec(open(path).read())
        break
    except OSError:
        pass
'''


def test_a_batch_student_cannot_read_another(place, closed_kit):
    """`grade batch --isolation container` (a cohort shard's container): the cohort closed to
    other users as the way out says, bob's code looks for alice's file in DIR and in OUT's
    staged copies, and finds neither."""
    cohort, out = place / "cohort", place / "out"
    (cohort / "alice").mkdir(parents=True)
    (cohort / "bob").mkdir()
    shutil.copy(KIT / "solutions" / EX01, cohort / "alice" / EX01)
    (cohort / "bob" / EX01).write_text(COPIER.format(cohort=str(cohort), out=str(out)), encoding="utf-8")
    cohort.chmod(0o700)
    run = subprocess.run([*as_user_prefix(place, None), *GRADE, "--lang", "en", "batch", str(cohort), "--out", str(out),
                          "--only", "ex01", "-j", "2", "--no-progress", "--isolation", "container"],
                         capture_output=True, text=True, env=_env(place, PYTHONPATH=str(closed_kit)), cwd=closed_kit,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))["students"]
    assert book["alice"]["score"] == 10 and book["bob"]["score"] == 0, book["bob"]


def test_a_batchs_zygotes_are_alive_when_its_judges_start(place, closed_kit):
    """Started side by side for a batch's judge slots: each from the batch's own thread (a zygote
    ends with the thread that started it, and would be started again, torch and all, by its judge)."""
    code = ("import time; from grader.model.course import load_course; from grader.cohort.batch import start_slots; "
            "zygotes = start_slots(load_course(), 'container', 2, [], 'en'); time.sleep(1); "
            "print([z.alive() for z in zygotes]); [z.close() for z in zygotes]")
    run = subprocess.run([*as_user_prefix(place, None), sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(place, PYTHONPATH=str(closed_kit)), cwd=closed_kit, timeout=600)
    assert run.stdout.split() == ["[True,", "True]"], run.stdout + run.stderr[-2000:]
