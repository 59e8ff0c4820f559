"""一个学生占满 CPU 或内存，不会拖垮另一个学生 / one student's processes never starve another's.

As root each worker joins cgroups of its uid (`grader.sandbox.slotgroups`): the kernel shares
the CPU between the judge slots first, and caps what each slot's processes hold together.
Measured before them (2026-12-03, two cores, `-j 2`): a submission forking 64 busy loops cost a
correct full-course submission in the other judge 10 points (ex06's whole-corpus check and
ex12's training ran past their limits); one starting 40 processes of 150 MB on a machine of
3 GB got the other judge's worker, the run's largest, killed by the kernel (0 of 10 points).
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

from grader.sandbox import slotgroups
from tests.cohort.test_batch import batch
from tests.sandbox.test_attacks import EX01, EX02, KIT, make_course

usable = pytest.mark.skipif(os.geteuid() != 0 or not slotgroups.hierarchies(),
                            reason="cgroups with a cpu or memory controller, as root")

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
    joined = [line for line in got["value"].splitlines() if line.endswith(f"/{slotgroups.GROUP}/u61990")]
    assert len(joined) == len(slotgroups.hierarchies()), got["value"]  # v1: cpu and memory; v2: one
    slotgroups.remove(61990)
    assert not any(os.path.exists(folder) for folder in slotgroups.group_folders(61990))


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
        from grader.sandbox import slotgroups, uids
        uid = uids.allocate()
        pid = os.fork()
        if pid == 0:
            slotgroups.join(uid)
            os._exit(0)
        os.waitpid(pid, 0)
        print(uid, all(map(os.path.isdir, slotgroups.group_folders(uid)[:1])), flush=True)
    ''')  # exits without uids.release
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=KIT)
    uid, made = run.stdout.split()
    assert made == "True", run.stderr
    deadline = time.monotonic() + 30
    while any(map(os.path.isdir, slotgroups.group_folders(int(uid)))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(os.path.isdir, slotgroups.group_folders(int(uid))))


HOG = textwrap.dedent('''
    import subprocess, sys, time
    _code = "import time\\nx = bytearray(150 << 20)\\nfor i in range(0, len(x), 4096):\\n    x[i] = 1\\ntime.sleep(60)\\n"
    for _ in range(40):  # small processes, each far below the other worker's size: never the kernel's first pick
        try:
            subprocess.Popen([sys.executable, "-S", "-c", _code])
        except OSError:
            break
    time.sleep(8)
''')

HOLDS = textwrap.dedent('''
    import time
    _held = bytearray(200 << 20)  # an honest worker holding 200 MB: the run's largest process
    for _i in range(0, len(_held), 4096):
        _held[_i] = 1
    time.sleep(5)
''')


def _small_machine(tmp_path, limit: int):
    """A v1 memory cgroup of `limit` bytes under this process's own (a machine of that size for
    what runs in it), and the pre-exec function that puts a child into it; None without one."""
    own = os.path.join("/sys/fs/cgroup/memory", slotgroups._own_path("memory"))
    if not os.path.isfile(os.path.join(own, "memory.limit_in_bytes")):
        return None, None
    group = os.path.join(own, f"gpt-grade-test-{os.getpid()}-{tmp_path.name}")
    os.makedirs(group)
    with open(os.path.join(group, "memory.limit_in_bytes"), "w") as handle:
        handle.write(str(limit))

    def enter():
        with open(os.path.join(group, "cgroup.procs"), "w") as handle:
            handle.write("0")
    return group, enter


@usable
def test_a_memory_hog_does_not_get_another_students_worker_killed(tmp_path):
    group, enter = _small_machine(tmp_path, 3 << 30)
    if group is None:
        pytest.skip("a cgroup v1 memory hierarchy to make a small machine in")
    try:
        course = make_course(tmp_path, timeout=20)
        folder = tmp_path / "cohort"
        for name, head in (("a-hog", HOG), ("honest", HOLDS)):
            (folder / name).mkdir(parents=True)
            (folder / name / EX01).write_text(head + (KIT / "solutions" / EX01).read_text(encoding="utf-8"),
                                              encoding="utf-8")
        run = batch(course, folder, tmp_path / "out", "-j", "2", "--only", "ex01", preexec_fn=enter)
        assert run.returncode == 0, run.stderr
        rows = {r[0]: r for r in csv.reader(io.StringIO((tmp_path / "out" / "grades.csv").read_text(encoding="utf-8")))}
        assert rows["honest"][1] == rows["(max)"][1], rows  # full marks while the hog ran beside it
    finally:
        deadline = time.monotonic() + 30
        for folder_left in [os.path.join(group, slotgroups.GROUP), group]:
            while os.path.isdir(folder_left) and time.monotonic() < deadline:
                try:
                    os.rmdir(folder_left)
                except OSError:
                    time.sleep(0.2)
