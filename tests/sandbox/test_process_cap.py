"""一个学生的 fork 炸弹不会耗尽用户的进程数 / one student's fork bomb never takes the user's last process.

As an ordinary user the workers run as the grader's own uid, so a bomb's processes counted
against the user's process limit (`limits.conf`, systemd's TasksMax, a cluster node's): when
the zygote could no longer fork, it died, and the batch stopped for every student with a
message blaming something outside (2026-12-03, an independent tester, 3 times of 3). Now each
worker caps its processes in its own user namespace (Linux 5.14+ counts them there apart),
and a zygote refused a fork tries again for a while, then tells the judge instead of dying.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.limits import nproc_counts_per_user_namespace
from tests.cohort.test_isolation import lingering
from tests.sandbox.as_user import as_user_prefix, needs_root
from tests.sandbox.test_attacks import EX01, EX02, KIT, make_course

# far past the user's limit the grader runs under; they stay while the other judge's workers start
BOMB = lingering(2000) + "time.sleep(4)\n"


@needs_root
@pytest.mark.skipif(not nproc_counts_per_user_namespace() or not shutil.which("prlimit"),
                    reason="Linux 5.14+ (process counts per user namespace) and prlimit")
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
        run = subprocess.run(["prlimit", "--nproc=600", *as_user_prefix(scratch), *grade, "batch", str(folder),
                              "--out", str(scratch / "home" / "out"), "-j", "2", "--no-progress"],
                             cwd="/", env={"PATH": os.environ.get("PATH", ""), "HOME": str(scratch / "home")},
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        rows = {r[0]: r for r in csv.reader(io.StringIO((scratch / "home" / "out" / "grades.csv").read_text(encoding="utf-8")))}
        for name in ("honest", "honest2"):
            assert rows[name][3] == rows["(max)"][3], rows
    finally:
        subprocess.run(["pkill", "-9", "-u", "61999"], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
