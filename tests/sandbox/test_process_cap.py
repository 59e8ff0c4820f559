"""一个学生的 fork 炸弹不会耗尽用户的进程数 / one student's fork bomb never takes the user's last process.

As an ordinary user the official tier's workers run in bubblewrap's user namespace as the
grader's own uid, so a bomb's processes would count against the user's process limit
(`limits.conf`, systemd's TasksMax, a cluster node's): the zygote could no longer fork and the
batch would stop for every student. Each worker caps its processes (`RLIMIT_NPROC`), which
Linux 5.14+ counts in the worker's own user namespace, so the bomb stops at its cap while the
other students' workers, under the user's limit, fork as they need.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.sandbox.as_user import as_user_prefix, needs_root, user_env
from tests.kit import EX01, EX02, KIT, make_course
from tests.processes import lingering


def _counts_per_user_namespace() -> bool:
    """Linux 5.14 and later count a process limit in each user namespace apart."""
    major, minor = (int(n) for n in os.uname().release.split(".")[:2])
    return sys.platform.startswith("linux") and (major, minor) >= (5, 14)


# far past the user's limit the grader runs under; they stay while the other judge's workers start
BOMB = lingering(2000) + "time.sleep(4)\n"


@needs_root
@pytest.mark.skipif(not _counts_per_user_namespace() or not shutil.which("prlimit") or bwrap_path() is None,
                    reason="Linux 5.14+ (process counts per user namespace), prlimit and bubblewrap")
def test_a_fork_bomb_under_a_user_process_limit_stops_no_one_else():
    scratch = Path(tempfile.mkdtemp(prefix="grade-nproc-", dir="/tmp"))
    try:
        course = make_course(scratch, timeout=20)
        folder = scratch / "cohort"
        for name in ("a-bomb", "honest", "honest2"):
            (folder / name).mkdir(parents=True)
            head = BOMB if name == "a-bomb" else "import time\ntime.sleep(2)\n"
            (folder / name / EX01).write_text(head + (KIT / "solutions" / EX01).read_text(encoding="utf-8"),
                                              encoding="utf-8")
            (folder / name / EX02).write_text((KIT / "solutions" / EX02).read_text(encoding="utf-8"), encoding="utf-8")
        for path in [scratch, *scratch.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o777 if path.is_dir() else 0o666)
        (scratch / "home").mkdir()
        (scratch / "home").chmod(0o777)  # HOME and OUT: the user's (the prefix makes scratch 0755)
        grade = [str(Path(sys.executable).parent / "grade"), "--course", str(course)]
        env = user_env(scratch / "home")
        proc = subprocess.Popen(["prlimit", "--nproc=600", *as_user_prefix(scratch), *grade, "batch", str(folder),
                                 "--out", str(scratch / "home" / "out"), "-j", "2", "--no-progress"],
                                cwd="/", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 0, err[-3000:]
        rows = {r[0]: r for r in csv.reader(io.StringIO((scratch / "home" / "out" / "grades.csv").read_text(encoding="utf-8")))}
        for name in ("honest", "honest2"):
            assert rows[name][3] == rows["(max)"][3], rows
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
