"""一个学生占满 CPU，不会拖垮另一个学生 / one student's busy processes never starve another's.

As root each worker joins a cgroup of its uid (`grader.sandbox.cpushare`): the kernel shares
the CPU between the judge slots first. Measured before it (2026-12-03, two cores, `-j 2`): a
submission forking 64 busy loops cost a correct full-course submission in the other judge
10 points (ex06's whole-corpus check and ex12's training ran past their limits).
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import textwrap
import time

import pytest

from grader.sandbox import cpushare
from tests.cohort.test_batch import batch
from tests.sandbox.test_attacks import EX01, EX02, KIT, make_course

usable = pytest.mark.skipif(os.geteuid() != 0 or not cpushare.parents(),
                            reason="cgroups with a cpu controller, as root")

BOMB = textwrap.dedent('''
    import os
    for _ in range(80):  # as many busy loops as the process cap allows, each in a session of its own
        try:
            if os.fork() == 0:
                os.setsid()
                while True:
                    pass
        except OSError:
            break
    while True:
        pass
''')

BURN = textwrap.dedent('''
    import time
    _end = time.process_time() + 1.0  # a second of CPU at import: real work a slow laptop needs too
    while time.process_time() < _end:
        pass
''')


@usable
def test_a_worker_joins_its_uids_group_before_dropping_root(tmp_path):
    from grader.sandbox import Worker, Zygote

    (tmp_path / "ex99_demo.py").write_text("def where():\n    return open('/proc/self/cgroup').read()\n",
                                           encoding="utf-8")
    zygote = Zygote(fence={"uid": 61990, "gid": 61990}).start()
    try:
        worker = Worker(zygote, str(tmp_path), "ex99_demo")
        got = worker.run({"probe": "common.call_function", "args": ("where", (), {}), "kwargs": {}}, 20.0)
        worker.kill()
    finally:
        zygote.close()
    assert got["ok"], got
    assert f"/{cpushare.GROUP}/u61990" in got["value"], got["value"]
    cpushare.remove(61990)
    assert not os.path.exists(os.path.join(cpushare.parents()[0][0], "u61990"))


@usable
def test_a_cpu_bomb_does_not_cost_another_student_points(tmp_path):
    course = make_course(tmp_path, timeout=6)
    folder = tmp_path / "cohort"
    for name, head in (("a-bomb", BOMB), ("honest", BURN)):  # side by side, each in a judge of its own
        (folder / name).mkdir(parents=True)
        (folder / name / EX01).write_text(head + (KIT / "solutions" / EX01).read_text(encoding="utf-8"),
                                          encoding="utf-8")
        (folder / name / EX02).write_text((KIT / "solutions" / EX02).read_text(encoding="utf-8"), encoding="utf-8")
    run = batch(course, folder, tmp_path / "out", "-j", "2")
    assert run.returncode == 0, run.stderr
    rows = {r[0]: r for r in csv.reader(io.StringIO((tmp_path / "out" / "grades.csv").read_text(encoding="utf-8")))}
    assert rows["honest"][3] == rows["(max)"][3], rows  # full marks while the bomb ran beside it
    assert rows["a-bomb"][1] == "0"


@usable
def test_a_runs_groups_go_with_it_even_unreleased():
    """The lease's watchdog, once the run has ended (killed, or never releasing), sweeps the
    uids and takes their empty CPU groups away."""
    code = textwrap.dedent('''
        import os
        from grader.sandbox import cpushare, uids
        uid = uids.allocate()
        pid = os.fork()
        if pid == 0:
            cpushare.join(uid)
            os._exit(0)
        os.waitpid(pid, 0)
        print(uid, os.path.isdir(os.path.join(cpushare.parents()[0][0], f"u{uid}")), flush=True)
    ''')  # exits without uids.release
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=KIT)
    uid, made = run.stdout.split()
    assert made == "True", run.stderr
    group = os.path.join(cpushare.parents()[0][0], f"u{uid}")
    deadline = time.monotonic() + 30
    while os.path.isdir(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.isdir(group)
