"""As root where workers get no mount namespace (Docker's default profile): secrets closed by
their modes, working folders that go with the run (grader.sandbox.mountless, .workdirs).

Docker's default profile is stood in for by `setpriv`, which takes CAP_SYS_ADMIN out of the
run's bounding set: unshare(2) is then refused as it is there. The runs use a copy of the kit,
since the kit changes the modes of what it would hide.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox import mountless, workdirs
from tests.sandbox.as_user import needs_root

KIT = Path(__file__).resolve().parents[2]
SOURCES = ["grader", "exercises", "solutions", "datasets", "course.toml", "pyproject.toml"]
NO_SYS_ADMIN = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"]
# Reads the reference's ex01 through a path the review scan cannot see, and runs it.
THIEF = '''
import os
_kit = os.environ.get("KIT_FOR_THIEF", "")
_path = os.path.join(_kit, {where}"snoitulos"[::-1], "ex01_windows.py")
_ns = {{}}
exec(compile(open(_path).read(), "ex01", "exec"), _ns)
make_windows, shift_pairs, count_targets = _ns["make_windows"], _ns["shift_pairs"], _ns["count_targets"]
MARK = "{mark}"
'''
COPIER = '''
import os
_path = os.path.join({cohort!r}, "alice", "ex01_windows.py")
_ns = {{}}
exec(compile(open(_path).read(), "ex01", "exec"), _ns)
make_windows, shift_pairs, count_targets = _ns["make_windows"], _ns["shift_pairs"], _ns["count_targets"]
MARK = "{mark}"
'''

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces"), needs_root]


@pytest.fixture(scope="module")
def place():
    """A world-searchable scratch folder holding a copy of the kit."""
    folder = Path(tempfile.mkdtemp(prefix="grade-mountless-", dir="/tmp"))
    os.chmod(folder, 0o755)
    kit = folder / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade*")
    for name in SOURCES:
        src = KIT / name
        if src.is_dir():
            shutil.copytree(src, kit / name, ignore=ignore)
        else:
            shutil.copy2(src, kit / name)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def grade(kit: Path, *args, before: str = "", readable_python: bool = True, **env) -> subprocess.CompletedProcess:
    """`grade ARGS` from the copy `kit`, as root without CAP_SYS_ADMIN, in a mount namespace of
    its own made first (`before`: shell run there, a read-only bind say). An interpreter under
    /root (pyenv, here) is made readable as a system one is (/usr/local in Docker's images):
    /root a world-readable tmpfs with only the installation bound back in."""
    home = os.path.realpath(sys.base_prefix)
    script = "set -e; "
    if readable_python and home.startswith("/root/"):
        script += ('mkdir -p "$0/python"; mount --bind "$1" "$0/python"; mount -t tmpfs -o mode=755 tmpfs /root; '
                   'mkdir -p "$1"; mount --bind "$0/python" "$1"; ')
    script += (before + "; " if before else "") + 'shift; exec "$@"'
    command = [sys.executable, "-c", "from grader.commands.main import entry; entry()", *args]
    env = {**os.environ, "PYTHONPATH": str(kit), "KIT_FOR_THIEF": str(kit), "GRADE_LANG": "en",
           "PYTHONDONTWRITEBYTECODE": "1", **env}
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(kit.parent), home, *NO_SYS_ADMIN, *command],
                          capture_output=True, text=True, env=env, cwd=kit, timeout=600)


def left_behind(mark: str, wait: float = 10.0) -> list[str]:
    """Working folders on the machine's file system still holding a copy marked `mark`, once
    the run's uid block has been swept (by its watchdog, just after `grade exNN` exits)."""
    deadline = time.monotonic() + wait
    while True:
        found = _marked(mark)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _marked(mark: str) -> list[str]:
    found = []
    for top in ["/tmp", *workdirs.ROOTS]:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            if name.startswith(("grade-worker-", "grade-workers-")):
                for copy in Path(top, name).rglob("ex01_windows.py"):
                    try:
                        if mark in copy.read_text():
                            found.append(str(copy))
                    except OSError:
                        pass
    return found


def test_unshare_is_refused_under_the_stand_in(place):
    """The stand-in is a real one: mount namespaces are refused, so the kit takes the path under test."""
    probe = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x20000) != 0)"
    assert subprocess.run([*NO_SYS_ADMIN, sys.executable, "-c", probe]).returncode == 1


def test_the_reference_stays_out_of_reach_and_nothing_is_left(place):
    kit, mark = place / "kit", "mark-" + os.urandom(6).hex()
    student = place / "thief"
    student.mkdir()
    (student / "ex01_windows.py").write_text(THIEF.format(mark=mark, where=""))
    assert stat.S_IMODE((kit / "solutions").stat().st_mode) & 0o005  # open before the run
    run = grade(kit, "ex01", "--submission", str(student), "--format", "json")
    assert run.returncode == 1, run.stderr
    result = json.loads(run.stdout)
    assert result["score"] == 0, result  # could not read the reference: the import failed
    assert "Permission denied" in run.stdout
    assert "closed to other users" in run.stderr and str(kit / "solutions") in run.stderr
    for name in ("solutions", "grader/checks", "grader/mistakes", "grader/pieces"):
        assert not stat.S_IMODE((kit / name).stat().st_mode) & 0o007, name
    assert left_behind(mark) == []  # its working folder went with its uid's sweep
    again = grade(kit, "ex01", "--submission", str(student), "--format", "json")
    assert "closed to other users" not in again.stderr  # said once, when a mode changed


def test_what_a_build_leaves_in_the_checkout_stays_out_of_reach(place):
    """`pip install .` leaves build/lib/grader/_kit/solutions/ in the checkout, world-readable."""
    kit = place / "kit"
    built = kit / "build" / "lib" / "grader" / "_kit" / "solutions"
    shutil.copytree(kit / "solutions", built)
    for folder in (built, *built.parents):
        if folder == kit:
            break
        os.chmod(folder, 0o755)
    student = place / "build-thief"
    student.mkdir()
    (student / "ex01_windows.py").write_text(THIEF.format(mark="m", where='"build", "lib", "grader", "_kit", '))
    run = grade(kit, "ex01", "--submission", str(student), "--format", "json")
    assert json.loads(run.stdout)["score"] == 0, run.stdout[-2000:]
    assert "Permission denied" in run.stdout and not stat.S_IMODE((kit / "build").stat().st_mode) & 0o007


def test_a_correct_submission_keeps_full_marks(place):
    """ex12 trains: torch.optim's first use imports modules lazily, as the workers' uid."""
    kit = place / "kit"
    run = grade(kit, "ex12", "--reference")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_batch_student_cannot_read_another(place):
    kit, mark = place / "kit", "mark-" + os.urandom(6).hex()
    cohort = place / "cohort"
    (cohort / "alice").mkdir(parents=True)
    (cohort / "bob").mkdir()
    shutil.copy(kit / "solutions" / "ex01_windows.py", cohort / "alice" / "ex01_windows.py")
    (cohort / "bob" / "ex01_windows.py").write_text(COPIER.format(cohort=str(cohort), mark=mark))
    os.chmod(cohort, 0o755)  # as an instructor's folder may well be
    out = place / "out"
    run = grade(kit, "batch", str(cohort), "--out", str(out), "--only", "ch05", "-j", "2", "--no-progress")
    assert run.returncode == 0, run.stderr
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert float(rows["alice"]["ex01"]) == 10
    assert float(rows["bob"]["ex01"]) == 0  # alice's file was closed to bob's worker
    assert not stat.S_IMODE(cohort.stat().st_mode) & 0o007
    assert left_behind(mark) == []


DEEP = """
import os
for _ in range(4000):  # deeper than shutil.rmtree's recursion can go
    os.mkdir("d")
    os.chdir("d")
"""


def test_a_tree_too_deep_to_walk_is_removed_and_stops_nothing(place):
    """A student's working folder 4,000 folders deep: once a RecursionError in the sweep, which
    lost the whole batch's gradebook and crashed every later run that leased the same uids."""
    kit, mark = place / "kit", "mark-" + os.urandom(6).hex()
    cohort = place / "deep-cohort"
    (cohort / "alice").mkdir(parents=True)
    (cohort / "deep").mkdir()
    solution = (kit / "solutions" / "ex01_windows.py").read_text()
    (cohort / "alice" / "ex01_windows.py").write_text(solution)
    (cohort / "deep" / "ex01_windows.py").write_text(DEEP + solution + f"\nMARK = {mark!r}\n")
    run = grade(kit, "batch", str(cohort), "--out", str(place / "deep-out"), "--only", "ex01", "-j", "1",
                "--no-progress")
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["student"]: r for r in csv.DictReader((place / "deep-out" / "grades.csv").open(encoding="utf-8"))}
    assert float(rows["alice"]["ex01"]) == float(rows["deep"]["ex01"]) == 10
    assert left_behind(mark) == []


LEAVER = """
import os, subprocess, sys
for folder in ("/tmp", "/dev/shm", "/var/tmp", {sticky!r}):
    with open(os.path.join(folder, ".left-{mark}"), "w") as note:
        note.write("for the next student")
subprocess.run(["ipcmk", "-Q"], check=True, capture_output=True)  # a System V message queue
subprocess.run([sys.executable, "-c", "import ctypes, os; ctypes.CDLL('librt.so.1').mq_open("  # a POSIX one
                "b'/left-{mark}', os.O_CREAT | os.O_RDWR, 0o644, None)"], check=True)
# another queue, its owner then set to nobody (IPC_SET): still its creator's to remove
subprocess.run([sys.executable, "-c", "import ctypes; libc = ctypes.CDLL(None); q = libc.msgget(0, 0o1666); "
                "buf = ctypes.create_string_buffer(256); libc.msgctl(q, 2, buf); "
                "ctypes.c_uint32.from_buffer(buf, 4).value = 65534; assert libc.msgctl(q, 1, buf) == 0"], check=True)
"""
FINDER = """
import os
for folder in ("/tmp", "/dev/shm", "/var/tmp", {sticky!r}):
    if os.path.exists(os.path.join(folder, ".left-{mark}")):
        raise RuntimeError("found what the last student left in " + folder)
if any(str(os.getuid()) in (line.split()[7], line.split()[9]) for line in open("/proc/sysvipc/msg").readlines()[1:]):
    raise RuntimeError("found the last student's message queue")
"""


def posix_queue(name: str, unlink: bool = False) -> bool:
    """Whether POSIX message queue `name` exists (then removed, with `unlink`)."""
    import ctypes

    librt = ctypes.CDLL("librt.so.1", use_errno=True)
    found = librt.mq_open(name.encode(), os.O_RDONLY) >= 0
    if found and unlink:
        librt.mq_unlink(name.encode())
    return found


def test_what_a_student_leaves_in_the_shared_temporary_folders_is_gone_for_the_next(place):
    """One judge (-j 1), so both students run as the same slot uid: files the first leaves in
    /tmp, /dev/shm and /var/tmp, in a folder below them every user may write to (a sticky
    /tmp/.X11-unix) and its message queue are swept with its uid, before the second starts (it
    raises at import if it finds any), and none is left after the run. A POSIX message queue
    (which no sweep could list where /dev/mqueue is not mounted) cannot be made at all."""
    kit, mark = place / "kit", "mark-" + os.urandom(6).hex()
    cohort = place / "left-cohort"
    sticky = place / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    solution = (kit / "solutions" / "ex01_windows.py").read_text()
    for name, first in (("a_leaver", LEAVER), ("b_finder", FINDER)):
        (cohort / name).mkdir(parents=True)
        (cohort / name / "ex01_windows.py").write_text(first.format(mark=mark, sticky=str(sticky)) + solution)
    run = grade(kit, "batch", str(cohort), "--out", str(place / "left-out"), "--only", "ex01", "-j", "1",
                "--no-progress")
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["student"]: r for r in csv.DictReader((place / "left-out" / "grades.csv").open(encoding="utf-8"))}
    book = json.loads((place / "left-out" / "results.json").read_text(encoding="utf-8"))
    assert float(rows["a_leaver"]["ex01"]) == float(rows["b_finder"]["ex01"]) == 10, [
        c.get("message") for who in ("a_leaver", "b_finder") for e in book["students"][who]["exercises"]
        for c in e["checks"]][:4]
    assert not [f for f in ("/tmp", "/dev/shm", "/var/tmp", sticky) if os.path.exists(os.path.join(f, f".left-{mark}"))]
    assert not posix_queue(f"/left-{mark}", unlink=True)


def test_an_entry_gone_since_the_listing_skips_only_itself(tmp_path, monkeypatch):
    """Another process's file removed between the sweep's listing and its look at it: once that
    skipped the whole of /tmp, leaving the last student's notes for the next."""
    (tmp_path / "mine").write_text("x")
    os.chown(tmp_path / "mine", 65003, 65003)
    listing = os.scandir

    class Gone:
        name, path = "gone", str(tmp_path / "gone")

        def stat(self, follow_symlinks=True):
            raise FileNotFoundError(self.path)

    class Listing:
        def __init__(self, folder):
            self.inner = listing(folder)

        def __enter__(self):
            return [Gone(), *self.inner.__enter__()]

        def __exit__(self, *exc):
            return self.inner.__exit__(*exc)

    monkeypatch.setattr(mountless.os, "scandir", Listing)
    assert mountless.owned_at(str(tmp_path), {65003}) == [str(tmp_path / "mine")]


def test_the_folders_every_user_may_write_to_are_found_wherever_others_reach(tmp_path):
    os.chmod(tmp_path, 0o755)
    deep = "open/" + "/".join(f"d{i}" for i in range(8))  # nine levels down
    for name, mode in (("sticky", 0o1777), ("closed", 0o700), ("closed/sticky", 0o1777), ("open", 0o755),
                       ("open/deeper", 0o755), ("open/deeper/scratch", 0o777), *((deep[:deep.index(f"d{i}") + 2], 0o755)
                                                                               for i in range(7)), (deep, 0o777)):
        (tmp_path / name).mkdir()
        os.chmod(tmp_path / name, mode)
    found = mountless.writable_folders([str(tmp_path)])
    assert sorted(found) == [str(tmp_path / deep), str(tmp_path / "open/deeper/scratch"), str(tmp_path / "sticky")]
    assert mountless.writable_folders([str(tmp_path)], depth=1) == [str(tmp_path / "sticky")]


def test_a_path_opened_under_the_run_stops_it_and_charges_no_one(place):
    """Something reopens solutions/ after the run closed it (here a loop of chmod): each worker
    finds it can read it before any code of the submission's runs, and says so signed. The
    run stops with exit 3 and the reason; no score is charged or written."""
    kit = place / "kit-reopened"
    shutil.copytree(place / "kit", kit, symlinks=True)
    sol = kit / "solutions"
    reopen = f'(for i in $(seq 150); do chmod o+rx "{sol}"; sleep 0.2; done) >/dev/null 2>&1 & true'
    out = place / "reopened.json"
    run = grade(kit, "ex01", "--reference", "--format", "json", "--out", str(out), before=reopen)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "the fence cannot keep" in run.stderr and str(sol) in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not out.exists()
    cohort = place / "reopened-cohort"
    for name in ("alice", "bob"):
        (cohort / name).mkdir(parents=True)
        shutil.copy(kit / "solutions" / "ex01_windows.py", cohort / name)
    run = grade(kit, "batch", str(cohort), "--out", str(place / "reopened-out"), "--only", "ex01", "-j", "2",
                "--no-progress", before=reopen)
    assert run.returncode == 3 and "the fence cannot keep" in run.stderr, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert not (place / "reopened-out" / "grades.csv").exists()  # no row charged with a fence's failure


def test_what_cannot_be_closed_stops_the_run(place):
    """A read-only solutions/ (a read-only bind mount, as `docker run -v kit:/kit:ro` gives):
    exit 3, the path and the way out said, nothing graded or written."""
    kit = place / "kit-ro"
    shutil.copytree(place / "kit", kit, symlinks=True)
    os.chmod(kit / "solutions", 0o755)
    out = place / "ro.json"
    sol = kit / "solutions"
    read_only = f'mount --bind "{sol}" "{sol}"; mount -o remount,bind,ro "{sol}"'
    run = grade(kit, "ex01", "--reference", "--format", "json", "--out", str(out), before=read_only)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "cannot grade" in run.stderr and str(sol) in run.stderr and "SYS_ADMIN" in run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count(str(sol)) == 1
    assert not out.exists()
    (place / "ro-cohort" / "alice").mkdir(parents=True)
    shutil.copy(kit / "solutions" / "ex01_windows.py", place / "ro-cohort" / "alice")
    run = grade(kit, "batch", str(place / "ro-cohort"), "--out", str(place / "ro-out"), "--only", "ex01",
                before=read_only)
    assert run.returncode == 3 and "cannot grade" in run.stderr, run.stdout + run.stderr
    assert not (place / "ro-out").exists()  # refused before OUT was made


@pytest.mark.skipif(mountless.open_to_others(os.path.realpath(sys.base_prefix)),
                    reason="this interpreter is readable by other users")
def test_an_interpreter_the_workers_cannot_read_stops_the_run(place):
    """pyenv under /root, say: every lazy import of a worker would fail (torch.optim's first use
    imports cProfile), each charged to the student. Exit 3 instead, before anything is graded."""
    run = grade(place / "kit", "ex12", "--reference", readable_python=False)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "cannot read the Python installation" in run.stderr and os.path.realpath(sys.base_prefix) in run.stderr
    assert "Traceback" not in run.stderr


def test_a_corpus_the_workers_cannot_read_is_graded_from_a_readable_copy(place):
    """The data folder and the cache both behind a folder others cannot enter: ex07's data
    checks read a copy made where the workers' uid can, and the reference passes."""
    private = place / "private"
    (private / "data").mkdir(parents=True)
    shutil.copytree(Path(os.environ["GPT_COURSE_DATA"]) / "tinyshakespeare", private / "data" / "tinyshakespeare")
    os.chmod(private, 0o700)
    shutil.rmtree(Path(workdirs.work_root(), "data"), ignore_errors=True)
    run = grade(place / "kit", "ex07", "--reference", GPT_COURSE_DATA=str(private / "data"),
                XDG_CACHE_HOME=str(private / "cache"))
    assert run.returncode == 0, run.stdout + run.stderr
    copies = list(Path(workdirs.work_root(), "data").glob("*/input.txt"))
    assert copies and all(stat.S_IMODE(c.stat().st_mode) == 0o644 for c in copies)


def test_open_and_closed_paths(place):
    tmp_path = place / "modes"
    tmp_path.mkdir(mode=0o755)
    open_dir, closed_dir = tmp_path / "open", tmp_path / "closed"
    open_dir.mkdir(mode=0o755)
    closed_dir.mkdir(mode=0o700)
    (closed_dir / "inside").write_text("x")
    os.chmod(closed_dir / "inside", 0o644)
    searchable = tmp_path / "searchable"
    searchable.mkdir()
    os.chmod(searchable, 0o711)  # a known name inside is enough
    assert mountless.open_to_others(str(open_dir))
    assert mountless.open_to_others(str(searchable))
    assert not mountless.open_to_others(str(closed_dir))
    assert not mountless.open_to_others(str(closed_dir / "inside"))  # behind a closed folder
    assert not mountless.open_to_others(str(tmp_path / "missing"))
    closed, still_open = mountless.close_to_others([str(open_dir), str(closed_dir), str(searchable)])
    assert closed == [str(open_dir), str(searchable)] and still_open == []
    assert stat.S_IMODE(open_dir.stat().st_mode) == 0o750
    assert stat.S_IMODE(closed_dir.stat().st_mode) == 0o700  # left as it was


def test_the_sweep_removes_only_its_uids_folders():
    root = workdirs.work_root()
    assert root is not None and stat.S_IMODE(os.lstat(root).st_mode) == 0o711
    mine = workdirs.make_workdir(root, 65001)
    other = workdirs.make_workdir(root, 65002)
    (Path(mine) / "sub").mkdir()
    os.symlink("/etc", Path(mine) / "sub" / "link")  # removed, never followed
    workdirs.clear([65001])
    assert not os.path.exists(mine) and os.path.isdir(other) and os.path.isdir("/etc")
    workdirs.clear([65002])
    assert not os.path.exists(other)
