"""Worker processes for student code, forked from a zygote.

The zygote is forked from the `grade` process at start-up, before the judge loads the
reference solutions or the checks, and imports torch once. Each worker is forked from the
zygote, so it starts in milliseconds with torch already loaded, and holds nothing of the
reference or the hidden checks. The judge talks to a worker over a socket pair: requests
are pickled by the judge (trusted), answers are plain data read with `wire.decode`.

A worker runs in its own process group; the judge kills the whole group when a call runs
past its time limit, when the worker misbehaves, and at the end.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import struct
import time

from grader import wire
from grader.worker import recv_frame, send_frame

DEFAULT_LIMITS = {"memory": 6 * 1024**3, "cpu": 900}


class WorkerTimeout(Exception):
    """The call ran past its time limit; the worker was killed."""


class WorkerDied(Exception):
    """The worker exited or sent something that is not plain data."""


def _zygote_main(sock: socket.socket) -> None:
    """Import what every worker needs, then fork a worker per request."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped automatically
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the judge's to handle
    import torch

    torch.set_num_threads(1)  # measured: one thread is never slower at these sizes
    import grader.probes.common  # noqa: F401  (warm the import for every worker)

    while True:
        try:
            header, fds, _, _ = socket.recv_fds(sock, 4, 1)
        except OSError:
            os._exit(0)
        if len(header) < 4:
            os._exit(0)  # the judge has gone
        (n,) = struct.unpack("!I", header)
        setup = json.loads(_recv_exact(sock, n))
        pid = os.fork()
        if pid == 0:
            sock.close()
            os.setpgid(0, 0)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            from grader.worker import serve

            try:
                serve(socket.socket(fileno=fds[0]), setup)
            finally:
                os._exit(0)
        os.close(fds[0])
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        sock.sendall(struct.pack("!I", pid))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            os._exit(0)
        data += chunk
    return data


class Zygote:
    """A process that forks workers on request. Start it before loading anything secret."""

    def __init__(self):
        self._sock = None
        self.pid = None

    def start(self) -> "Zygote":
        if self._sock is not None:
            return self
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            ours.close()
            try:
                _zygote_main(theirs)
            finally:
                os._exit(0)
        theirs.close()
        self._sock, self.pid = ours, pid
        return self

    def spawn(self, setup: dict) -> tuple[int, socket.socket]:
        """Fork a worker; returns its pid and the judge's end of its socket."""
        self.start()
        judge_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        body = json.dumps(setup).encode()
        try:
            socket.send_fds(self._sock, [struct.pack("!I", len(body))], [worker_end.fileno()])
            self._sock.sendall(body)
            (pid,) = struct.unpack("!I", self._recv(4))
        finally:
            worker_end.close()
        return pid, judge_end

    def _recv(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self._sock.recv(n - len(data))
            if not chunk:
                raise WorkerDied("zygote exited")
            data += chunk
        return data

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass


class Worker:
    """The judge's handle on one worker process for one exercise of one submission."""

    def __init__(self, zygote: Zygote, submission: str | None, module: str, limits: dict | None = None):
        self.zygote = zygote
        self.setup = {"submission": submission, "module": module, "limits": limits or DEFAULT_LIMITS}
        self.pid = None
        self._sock = None
        self._import_timed_out = False

    def _ensure(self, deadline: float) -> None:
        """Start a worker and wait until it has imported the student's module."""
        if self._import_timed_out:
            raise WorkerTimeout("import")  # the module never finishes importing: do not wait again
        if self._sock is None:
            self.pid, self._sock = self.zygote.spawn(self.setup)
            try:
                _recv_until(self._sock, deadline)
            except (TimeoutError, socket.timeout):
                self._import_timed_out = True
                self.kill()
                raise WorkerTimeout("import") from None
            except (EOFError, OSError) as err:
                self.kill()
                raise WorkerDied(f"worker exited while importing ({type(err).__name__})") from None

    def run(self, request: dict, timeout: float) -> dict:
        """Send a probe request; the answer as plain data. Kills the worker on timeout."""
        deadline = time.monotonic() + timeout
        self._ensure(deadline)
        try:
            send_frame(self._sock, pickle.dumps(request))
            self._sock.settimeout(max(0.01, deadline - time.monotonic()))
            blob = _recv_until(self._sock, deadline)
        except (TimeoutError, socket.timeout):
            self.kill()
            raise WorkerTimeout(timeout) from None
        except (EOFError, OSError) as err:
            self.kill()
            raise WorkerDied(f"worker exited ({type(err).__name__})") from None
        try:
            answer = wire.decode(blob)
        except wire.DecodeError as err:
            self.kill()
            raise WorkerDied(f"not plain data: {err}") from None
        if not isinstance(answer, dict) or "ok" not in answer:
            self.kill()
            raise WorkerDied("malformed answer")
        return answer

    def kill(self) -> None:
        if self._sock is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._sock.close()
            self._sock = None


def _recv_until(sock: socket.socket, deadline: float) -> bytes:
    """recv_frame with the socket's timeout moved along to the deadline."""

    class _Deadline:
        def recv(self, n):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
            return sock.recv(n)

    return recv_frame(_Deadline())
