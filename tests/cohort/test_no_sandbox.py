"""`grade batch` where bubblewrap cannot build its sandbox: refused, exit 3, with the way out.

As an ordinary user without user namespaces (Ubuntu 23.10 and later restrict them through
AppArmor), bubblewrap cannot make the sandbox the official tier needs; grading never falls
back to a weaker mode. Stood in for by a user namespace of the test's own whose
`user.max_user_namespaces` is 0: inside it, the kit (as uid 61997) can make no user namespace,
as there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.sandbox.as_user import as_user_prefix, needs_root, user_env

KIT = Path(__file__).resolve().parents[2]
USER = 61997
# Runs argv[1:] in a new user namespace (identity maps, so root stays root) where no further
# user namespace can be made.
NO_USER_NAMESPACES = '''
import ctypes, os, sys
ready, go = os.pipe(), os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
        os._exit(90)
    os.write(ready[1], b"x")
    os.read(go[0], 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as handle:
        handle.write("0")
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(ready[0], 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as handle:
        handle.write("0 0 4294967295")
os.write(go[1], b"x")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
'''

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                 reason="Linux user namespaces, bubblewrap"), needs_root]


@pytest.fixture()
def place():
    folder = Path(tempfile.mkdtemp(prefix="grade-no-sandbox-", dir="/tmp"))
    os.chmod(folder, 0o755)
    (folder / "launch.py").write_text(NO_USER_NAMESPACES)
    for name in ("alice", "mallory"):
        (folder / "cohort" / name).mkdir(parents=True)
    shutil.copy(KIT / "solutions" / "ex01_windows.py", folder / "cohort" / "alice")
    (folder / "cohort" / "mallory" / "ex01_windows.py").write_text("raise SystemExit('nothing here')\n")
    (folder / "home").mkdir()
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, USER, USER)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def batch_as_user(place: Path, *extra: str) -> subprocess.CompletedProcess:
    env = user_env(place / "home", GRADE_LANG="en", GPT_COURSE_DATA=os.environ.get("GPT_COURSE_DATA", ""),
                   XDG_CACHE_HOME=str(place / "home" / "cache"))
    command = [str(Path(sys.executable).parent / "grade"), "batch", str(place / "cohort"), "--out",
               str(place / "out"), "--only", "ch05", "-j", "2", "--no-progress", *extra]
    return subprocess.run([sys.executable, str(place / "launch.py"), *as_user_prefix(place, USER), *command],
                          cwd="/", env=env, capture_output=True, text=True, timeout=600)


def test_refused_with_the_way_out_where_bubblewrap_cannot_build_its_sandbox(place):
    run = batch_as_user(place)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "apt-get install bubblewrap" in run.stderr and "--isolation container" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (place / "out" / "grades.csv").exists() and not list(place.glob("out/students/*"))
