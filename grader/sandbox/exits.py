"""How a worker ended, and where it was: two pipes from a worker's side to the judge.

Each worker gets two pipes whose read ends the judge keeps (`EndPipes`):

- the dump pipe: the worker's faulthandler writes its stack there when the judge sends
  SIGUSR1 (a call past its time limit, just before the kill) and when a fatal signal kills it
  (a segfault in the student's code). The worker holds its write end, so the student's code
  can write anything there too: it is shown as where the code was, and decides nothing.
- the status pipe: the zygote, the worker's parent, reaps it and writes its wait status after
  a mark. Only the zygote holds its write end (the worker closes its copy before anything of
  the submission's runs), so the status the judge reads is the one the kernel gave.

    Fatal Python error: Segmentation fault                  (dump pipe)
    Current thread 0x7f… (most recent call first):
      File "/tmp/submission/ex01_windows.py", line 57 in make_windows
    …
    grader-worker-exit-status: 11                           (status pipe)

`EndPipes(dump, status).ended()` -> (the dump, 11): `os.WTERMSIG(11)` is SIGSEGV.
"""

from __future__ import annotations

import os
import select
import signal
import time

STATUS_MARK = "grader-worker-exit-status: "
# A worker's own exit code when its channel to the judge failed mid-way (the student's code
# closed or replaced its file descriptors): the judge names that, not os._exit. A student
# who exits with it gets the same words; it decides no point.
CHANNEL_LOST = 71
DUMP_CAP = 64 * 1024  # bytes of a dump the judge reads from a worker


def reaper(status_fds: dict[int, int]):
    """A SIGCHLD handler for the zygote: reap workers and write how each one ended to its status pipe."""

    def reap(signum, frame) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fd = status_fds.pop(pid, None)
            if fd is not None:
                try:
                    os.write(fd, f"\n{STATUS_MARK}{status}\n".encode())
                except OSError:  # the judge has closed its end (it killed the worker itself)
                    pass
                os.close(fd)

    return reap


def leave(status_fds: dict[int, int], limit: float = 2.0) -> None:
    """The zygote's end (its judge has gone): kill the workers still running and reap them
    before exiting, so that none is left as a zombie of the machine's init (a container's init
    may never reap it). Each is our own unreaped child, so its pid cannot have been reused."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    for pid in list(status_fds):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break  # none left
        if pid == 0:
            time.sleep(0.005)  # a worker holding torch takes a few milliseconds to exit
    os._exit(0)


def read_dump(fd: int | None, quiet: float = 0.3, limit: float = 1.0) -> str:
    """What is on the (non-blocking) dump pipe: until it is closed, or quiet for `quiet` s, at most `limit` s."""
    if fd is None:
        return ""
    chunks, size, end = [], 0, time.monotonic() + limit
    while size < DUMP_CAP:
        wait = min(quiet, end - time.monotonic())
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            break
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def read_status(fd: int | None, limit: float = 1.5) -> int | None:
    """The wait status the zygote wrote on a status pipe (it closes the pipe after it), or None
    if nothing came within `limit` s (the zygote itself was killed)."""
    text = read_dump(fd, quiet=limit, limit=limit)
    _, mark, tail = text.rpartition(STATUS_MARK)
    try:
        return int(tail.split()[0]) if mark else None
    except (ValueError, IndexError):
        return None


class EndPipes:
    """The read ends the judge keeps of one worker's dump pipe and status pipe (module docstring)."""

    def __init__(self, dump: int, status: int):
        self.dump, self.status = dump, status

    def stack(self, pid: int) -> str:
        """What a worker at its limit had printed (SIGUSR2), then where it was (SIGUSR1, its
        faulthandler dump); empty if it could not answer."""
        try:
            if hasattr(signal, "SIGUSR2"):
                os.kill(pid, signal.SIGUSR2)
                time.sleep(0.02)  # its handler runs at the next instruction of Python's
            os.kill(pid, signal.SIGUSR1)
        except (ProcessLookupError, PermissionError):
            return ""
        return read_dump(self.dump, quiet=0.15, limit=1.0)

    def ended(self) -> tuple[str, int | None]:
        """After a worker's socket closed: (what faulthandler wrote, the wait status or None)."""
        status = read_status(self.status)
        # The worker has been reaped, so its own copy of the dump pipe is closed; a process the
        # student's code left may hold one: then a short wait.
        return read_dump(self.dump, quiet=0.2, limit=0.5), status

    def close(self) -> None:
        for fd in (self.dump, self.status):
            try:
                os.close(fd)
            except OSError:
                pass
        self.dump = self.status = None
