"""The portable workers (fresh interpreters, `GRADE_WORKER=spawn`): same grades, no POSIX-only call.

1. A student's own `grade ex01` (the practice tier) runs in a process where what Windows lacks
   is gone (a sitecustomize deletes os.fork, os.killpg, os.setpgid, signal.SIGALRM/SIGKILL,
   select.select, AF_UNIX and fd passing, makes `import resource` / `import fcntl` fail and
   /proc unreadable): the reference scores full marks (exit 0), a wrong answer scores what
   it scores with forked workers (exit 1), an endless loop that started a process of its own
   is stopped at the time limit with that process ended too. Every worker ran under the
   same restrictions (each one logs itself). (The official tiers are Linux's; how their intake
   reads a submission without `O_NOFOLLOW` and `dir_fd` is tests/sandbox/test_intake.py's.)
2. In both modes: the reference at full marks and the known mistakes (written into the
   file as a student would) failing, through the same judge.
3. The pieces: the mode choice, frames over pipes, the pipe channel's time-out, the tree kill,
   and the Windows job structures' layout (the one part that cannot run here).
"""

from __future__ import annotations

import ctypes
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.build.selfcheck import grade_folder
from grader.judge.mistakes import mistakes_for
from grader.judge.references import LiveReferences
from grader.model.course import load_course
from grader.sandbox import ForkZygote, SpawnZygote, Zygote, worker_mode
from grader.sandbox.framing import PipePair, recv_frame, send_frame
from grader.sandbox.pool import PipeChannel
from grader.sandbox.tree import JobExtendedLimits, for_this_os, job_limits
from tests.in_process import grade

KIT = Path(__file__).resolve().parents[2]
COURSE = load_course()
GRADE = [sys.executable, "-c", "from grader.commands.main import entry; entry()"]

# What a Windows interpreter lacks, taken away at start-up (judge and every worker alike).
PRELUDE = '''
import builtins, io, os, select, signal, socket, sys

class _NoPosix:
    def find_spec(self, name, path=None, target=None):
        if name in ("resource", "fcntl", "termios"):
            raise ImportError(f"no {name} here (portable test)")
        return None

sys.meta_path.insert(0, _NoPosix())
for _name in ("resource", "fcntl", "termios"):
    sys.modules.pop(_name, None)
for _module, _names in ((os, ("fork", "forkpty", "killpg", "setpgid", "setsid", "getpgid", "wait3", "wait4")),
                        (signal, ("SIGALRM", "SIGKILL", "alarm", "setitimer")),
                        (select, ("select",)),
                        (socket, ("AF_UNIX", "send_fds", "recv_fds"))):
    for _name in _names:
        if hasattr(_module, _name):
            delattr(_module, _name)

def _no_proc(function):
    def wrapped(path=".", *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path).startswith("/proc"):
            raise FileNotFoundError(2, "no /proc here (portable test)", os.fspath(path))
        return function(path, *args, **kwargs)
    return wrapped

builtins.open = io.open = _no_proc(io.open)
os.open, os.listdir, os.scandir, os.stat = (_no_proc(os.open), _no_proc(os.listdir), _no_proc(os.scandir),
                                            _no_proc(os.stat))
if os.environ.get("PORTABLE_TEST_NO_NOFOLLOW") and sys.argv == ["-c"]:  # a worker, as on Windows
    for _name in ("O_NOFOLLOW", "O_DIRECTORY"):
        if hasattr(os, _name):
            delattr(os, _name)
    os.supports_dir_fd, os.supports_fd = set(), set()
if os.environ.get("PORTABLE_TEST_LOG"):
    with open(os.environ["PORTABLE_TEST_LOG"], "a") as _log:
        _log.write(f"{os.getpid()} {' '.join(sys.argv)[:80]}{' no-nofollow' if not hasattr(os, 'O_NOFOLLOW') else ''}\\n")
'''


def restricted_env(tmp_path: Path, log: Path, **extra) -> dict:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(PRELUDE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "GRADE_WORKER"}
    env.update(PYTHONPATH=os.pathsep.join([str(site)] + [p for p in [env.get("PYTHONPATH")] if p]),
               PORTABLE_TEST_LOG=str(log), GRADE_LANG="en", **extra)
    return env


def grade_json(args, env, cwd) -> tuple[subprocess.CompletedProcess, dict | None]:
    """`grade ARGS` run in `cwd`: without `--submission`, a student's own run of `cwd/exercises`."""
    out = Path(cwd) / "report.json"
    out.unlink(missing_ok=True)
    run = subprocess.run(GRADE + args + ["--format", "json", "--out", str(out)], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=600)
    return run, (json.loads(out.read_text(encoding="utf-8")) if out.exists() else None)


def checks_of(report: dict) -> dict[str, tuple[bool, float]]:
    return {c["name"]: (c["passed"], c["score"]) for e in report["exercises"] for c in e["checks"]}


OFF_BY_ONE = ("while i + block_size + 1 <= len(tokens):", "while i + block_size + 1 < len(tokens):")


def off_by_one_ex01() -> str:
    source = (KIT / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    assert OFF_BY_ONE[0] in source
    return source.replace(OFF_BY_ONE[0], OFF_BY_ONE[1])


def test_the_command_line_grades_where_posix_calls_are_missing(tmp_path):
    log = tmp_path / "processes.log"
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    (right / "exercises").mkdir(parents=True)
    (wrong / "exercises").mkdir(parents=True)
    shutil.copy(KIT / "solutions" / "ex01_windows.py", right / "exercises")
    (wrong / "exercises" / "ex01_windows.py").write_text(off_by_one_ex01(), encoding="utf-8")

    run, report = grade_json(["ex01"], restricted_env(tmp_path, log, GRADE_WORKER="spawn"), right)
    assert run.returncode == 0, run.stderr[-3000:]
    assert report["score"] == report["max_score"] > 0
    assert "Traceback" not in run.stdout + run.stderr

    # No GRADE_WORKER: without fork the spawn mode is chosen by itself.
    run, report = grade_json(["ex01"], restricted_env(tmp_path, log), wrong)
    assert run.returncode == 1, run.stderr[-3000:]
    assert 0 < report["score"] < report["max_score"]
    # the same answer with forked workers, in this process (nothing taken away): the grades to match
    out = tmp_path / "forked.json"
    forked = grade("ex01", "--format", "json", "--out", str(out), cwd=wrong, env={"GRADE_WORKER": "fork", "GRADE_LANG": "en"})
    expected = json.loads(out.read_text(encoding="utf-8"))
    assert forked.returncode == 1 and checks_of(report) == checks_of(expected)

    lines = [line.split()[1:] for line in log.read_text(encoding="utf-8").splitlines()]
    judges, workers = [a for a in lines if "ex01" in a], [a for a in lines if a == ["-c"]]
    assert len(judges) == 2 and len(workers) >= 2, lines  # the two judges and their workers: all restricted


def short_course(tmp: Path, timeout: int = 3) -> Path:
    """course.toml with ex01 only and a short time limit, beside links to the kit's folders."""
    text = (KIT / "course.toml").read_text(encoding="utf-8")
    head, *blocks = text.split("[[exercises]]")
    keep = [re.sub(r"^timeout\s*=\s*[\d.]+", f"timeout = {timeout}", b, flags=re.M)
            for b in blocks if re.search(r'^id\s*=\s*"ex01"', b, re.M)]
    root = tmp / "course"
    (root / "grader").mkdir(parents=True)
    (root / "course.toml").write_text(head + "".join("[[exercises]]" + b for b in keep), encoding="utf-8")
    for name in ("exercises", "solutions"):
        (root / name).symlink_to(KIT / name)
    (root / "grader" / "checks").symlink_to(KIT / "grader" / "checks")
    return root / "course.toml"


def alive(pid: int) -> bool:
    """Is process `pid` running (not a zombie)? Linux: /proc; Windows: tasklist; else kill(pid, 0)."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                return handle.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False
    if os.name == "nt":
        found = subprocess.run(["tasklist", "/FI", f"PID eq {pid}", "/NH"], capture_output=True, text=True)
        return str(pid) in found.stdout
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_a_time_limit_ends_the_whole_tree_without_posix_calls(tmp_path):
    pids = tmp_path / "children.txt"
    sub = tmp_path / "student" / "exercises"
    sub.mkdir(parents=True)
    (sub / "ex01_windows.py").write_text(textwrap.dedent(f'''
        import subprocess, sys

        def _stay():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
            with open({str(pids)!r}, "a") as handle:
                handle.write(f"{{child.pid}}\\n")
            while True:
                pass

        shift_pairs = make_windows = count_targets = lambda *a, **k: _stay()
    '''), encoding="utf-8")
    course = short_course(tmp_path, timeout=1)
    started = time.monotonic()
    run, report = grade_json(["--course", str(course), "ex01"],
                             restricted_env(tmp_path, tmp_path / "log", GRADE_WORKER="spawn"), sub.parent)
    assert run.returncode == 1, run.stderr[-3000:]
    assert report["score"] == 0
    assert any("Timeout" in c["message"] or "time" in c["message"].lower()
               for e in report["exercises"] for c in e["checks"]), report
    children = [int(p) for p in pids.read_text().split()]
    assert children  # the student's code ran and started its process
    deadline = time.monotonic() + 10
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in children if alive(p)], "a process the worker started outlived its time limit"
    assert time.monotonic() - started < 300


# ---------------------------------------------------------------- both modes, one judge


@pytest.fixture(scope="module")
def mode_zygote(worker_mode):
    z = Zygote().start()
    assert isinstance(z, SpawnZygote) == (worker_mode == "spawn")
    yield z
    z.close()


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)


def mutant_source(reference_source: str, mistake) -> str:
    """The reference file with a mistake's functions written in, as a student's file would be."""
    parts = [reference_source]
    for name, function in mistake.overrides.items():
        parts.append(textwrap.dedent(inspect.getsource(function)))
        parts.append(f"{name} = {function.__name__}\n")
    return "\n\n".join(parts)


@pytest.mark.parametrize("exercise_id", ["ex01", "ex05"])
def test_reference_full_marks_and_mistakes_fail_in_both_modes(exercise_id, mode_zygote, references, tmp_path):
    (result,) = grade_folder(COURSE, [exercise_id], COURSE.solutions_dir, references, mode_zygote)
    assert result.score == result.max_score > 0, [c.name for c in result.checks if not c.passed]
    ex = COURSE.exercise(exercise_id)
    source = (COURSE.solutions_dir / ex.file).read_text(encoding="utf-8")
    mistakes = [m for m in mistakes_for(exercise_id)
                if all(inspect.getsource(f).lstrip().startswith("def ") for f in m.overrides.values())][:3]
    assert mistakes
    for mistake in mistakes:
        folder = tmp_path / mistake.id
        folder.mkdir()
        (folder / ex.file).write_text(mutant_source(source, mistake), encoding="utf-8")
        (graded,) = grade_folder(COURSE, [exercise_id], folder, references, mode_zygote)
        failed = [c for c in graded.checks if not c.passed]
        assert failed and graded.score < graded.max_score, mistake.id
        told = " ".join(c.finding.en + c.finding.traceback for c in failed if c.finding)
        assert "NameError" not in told, (mistake.id, told)


# ---------------------------------------------------------------- the pieces


def test_the_mode_is_chosen_where_fork_is_missing_or_unsafe(monkeypatch):
    assert worker_mode({}, "linux", True) == "fork"
    assert worker_mode({}, "darwin", True) == "spawn"
    assert worker_mode({}, "win32", False) == "spawn"
    assert worker_mode({"GRADE_WORKER": "spawn"}, "linux", True) == "spawn"
    assert worker_mode({"GRADE_WORKER": "fork"}, "darwin", True) == "fork"
    assert worker_mode({"GRADE_WORKER": "fork"}, "win32", False) == "spawn"  # asked for, not there
    monkeypatch.setenv("GRADE_WORKER", "spawn")
    assert type(Zygote()) is SpawnZygote
    monkeypatch.setenv("GRADE_WORKER", "fork")
    assert type(Zygote()) is ForkZygote


def test_frames_cross_a_pair_of_pipes():
    to_r, to_w = os.pipe()
    back_r, back_w = os.pipe()
    ours, theirs = PipePair(back_r, to_w), PipePair(to_r, back_w)
    blob = os.urandom(3 << 20)  # several chunks, more than a pipe holds: written from a thread
    send_frame(ours, b"ping")
    assert recv_frame(theirs) == b"ping"
    sender = threading.Thread(target=send_frame, args=(theirs, blob))
    sender.start()
    assert recv_frame(ours) == blob
    sender.join()
    ours.close()
    with pytest.raises(EOFError):
        recv_frame(theirs)
    theirs.close()


def popen(code: str) -> tuple[subprocess.Popen, object]:
    tree = for_this_os()
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                            **tree.popen_options())
    tree.adopt(proc)
    return proc, tree


def test_the_pipe_channel_times_out_and_the_tree_dies_with_its_worker():
    code = textwrap.dedent('''
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        os.write(1, str(child.pid).encode().rjust(12))
        time.sleep(300)
    ''')
    proc, tree = popen(code)
    channel = PipeChannel(proc, tree)
    channel.settimeout(60)
    child = int(b"".join(channel.recv(12) for _ in range(1)).decode())
    assert alive(child)
    channel.settimeout(0.3)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        channel.recv(1)
    assert time.monotonic() - started < 60  # the child sleeps 300 s: the timeout ended the wait
    channel.kill_tree()
    channel.close()
    deadline = time.monotonic() + 10
    while (alive(child) or proc.poll() is None) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child) and proc.poll() is not None


def test_a_flood_waits_for_the_judge_instead_of_filling_its_memory(tmp_path):
    count = tmp_path / "written"
    proc, tree = popen(textwrap.dedent(f'''
        import os
        written = 0
        while True:
            written += os.write(1, b"x" * 65536)
            with open({str(count)!r}, "w") as handle:
                handle.write(str(written))
    '''))
    channel = PipeChannel(proc, tree)
    channel.settimeout(30)
    assert channel.recv(10) == b"x" * 10
    time.sleep(1.5)  # unbounded, the reader would take gigabytes by now
    written = int(count.read_text() or 0)
    assert written <= (channel._chunks.maxsize + 2) * (1 << 20) + (1 << 20), written
    channel.kill_tree()
    channel.close()


def test_the_windows_job_limits_have_the_windows_layout():
    # JOBOBJECT_EXTENDED_LIMIT_INFORMATION is 144 bytes on 64-bit Windows (112 on 32-bit).
    assert ctypes.sizeof(JobExtendedLimits) == (144 if ctypes.sizeof(ctypes.c_void_p) == 8 else 112)
    info = job_limits(memory=1 << 30, cpu=2.5, processes=8)
    assert info.BasicLimitInformation.LimitFlags == 0x2000 | 0x400 | 0x200 | 0x4 | 0x8
    assert info.JobMemoryLimit == 1 << 30 and info.BasicLimitInformation.ActiveProcessLimit == 8
    assert info.BasicLimitInformation.PerJobUserTimeLimit == 25_000_000
    assert job_limits().BasicLimitInformation.LimitFlags == 0x2000 | 0x400  # killed with the job, always


PORTABLE_MODULES = ["grader/sandbox/spawn.py", "grader/sandbox/pool.py", "grader/sandbox/tree.py",
                    "grader/sandbox/framing.py", "grader/sandbox/intake.py", "grader/sandbox/walkers.py",
                    "grader/sandbox/refusals.py"]
POSIX_ONLY = re.compile(r"\bos\.(fork|forkpty|killpg|setpgid|setsid|wait3|wait4)\b|\bsignal\.(SIGALRM|alarm|setitimer)\b"
                        r"|\bselect\.select\b|\bimport fcntl\b|\bAF_UNIX\b|['\"]/proc")


def test_the_portable_modules_name_no_posix_only_call():
    """Read as the reviewers will: resource only behind ImportError, SIGKILL only through getattr."""
    for rel in PORTABLE_MODULES:
        text = (KIT / rel).read_text(encoding="utf-8")
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        body = code.split('"""', 2)[-1]  # past the module docstring (which names them)
        assert not POSIX_ONLY.findall(body), (rel, POSIX_ONLY.findall(body))
        assert "signal.SIGKILL" not in body.replace('getattr(signal, "SIGKILL"', ""), rel
