"""Finding the processes a run started, and what it left: read from /proc (Linux); what is done
to them from beside a run in this process.

    >>> busy_sandbox(batch.pid)        # doctest: +SKIP  (a bwrap under the batch whose zygote has a worker)
    >>> named("atk1f2e3d4c5b")         # doctest: +SKIP  (the live processes of that name)
    >>> with alongside(lambda: os.kill(busy_sandbox(os.getpid()), signal.SIGKILL)):  # doctest: +SKIP
    ...     run = batch_here(course, folder, out)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def sandboxes(pid: int) -> list[int]:
    """The bwrap processes among `pid`'s descendants (a batch's judges start their own anew)."""
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            (found if _comm(child) == "bwrap" else todo).append(child)
    return found


def busy_sandboxes(pid: int, count: int, timeout: float = 180.0) -> list[int]:
    """`count` bwrap processes under `pid` whose zygotes each have a worker (waited for)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [bwrap for bwrap in sandboxes(pid) if any(children(zygote) for zygote in children(bwrap))]
        if len(busy) >= count:
            return busy
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} sandboxes with a worker under {pid}")


def busy_sandbox(pid: int, timeout: float = 180.0) -> int:
    """A bwrap process under `pid` whose zygote has a worker."""
    return busy_sandboxes(pid, 1, timeout)[0]


def keep_killing(pid: int, stop: threading.Event) -> threading.Thread:
    """A thread that kills every sandbox under `pid` as soon as it appears, until `stop`."""

    def kill() -> None:
        while not stop.is_set():
            for bwrap in sandboxes(pid):
                try:
                    os.kill(bwrap, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def left_in_session(sid: int, patience: float = 5.0) -> list[str]:
    """The processes of session `sid` still there once it has emptied or `patience` seconds have
    passed: a killed process's children take a moment to go on a loaded machine (and hold what
    they held till then, a batch's lock on OUT)."""
    deadline = time.monotonic() + patience
    while True:
        left = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True, text=True).stdout.split()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@contextlib.contextmanager
def alongside(work, stop: threading.Event | None = None):
    """`work()` in a thread of its own while the block runs (a batch in this process, whose judges
    and sandboxes are this process's descendants): once the block ends, `stop` is set and the
    thread waited for, and what `work` raised is raised here."""
    raised = []

    def run() -> None:
        try:
            work()
        except BaseException as err:  # noqa: BLE001 - raised in the test's own thread below
            raised.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        if stop is not None:
            stop.set()
        thread.join(timeout=600)
    if raised:
        raise raised[0]


def named(token: str) -> set[int]:
    """The live processes named `token` (each attack names its process so, and its children
    inherit the name): what a run left behind."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() == token and not _zombie(int(entry)):
                        found.add(int(entry))
            except OSError:
                continue
    return found


def _zombie(pid: int) -> bool:
    """An ended process not yet reaped: it holds nothing and runs no code."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone


def lingering(count: int) -> str:
    """Code that starts `count` processes (or as many as it may), each in a session of its own,
    sleeping two minutes: what a student's code leaves behind."""
    return f'''
import os
import time

for _ in range({count}):
    try:
        if os.fork() == 0:
            os.setsid()
            time.sleep(120)
            os._exit(0)
    except OSError:
        break
'''
