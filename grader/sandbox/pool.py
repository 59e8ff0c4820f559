"""Workers as fresh interpreters, started ahead of need: the portable way to run student code.

Where `os.fork` is missing (Windows) or unsafe once torch and Apple's frameworks are loaded
(macOS), a worker cannot be forked from a zygote. `SpawnZygote` starts each worker as a
new interpreter instead (`grader.sandbox.spawn`), talking over the worker's stdin and
stdout with the same frames, the same requests (judge to worker: trusted, `requestcodec`) and the
same plain-data answers (worker to judge: `plaincodec`, no pickle) as a forked one, so the
judge's `Worker` is the same object in both modes.

Starting an interpreter and importing torch takes about as long as `import torch` itself,
so workers are started ahead of need: `start()` launches `size` of them (they import torch
and every probe in parallel with the judge, then wait for their setup). A worker done with
(killed at the end of a grade, or after a time-out) is replaced at once, so a re-grade in
`grade watch` takes one that has been ready for a while; while other workers are in use
(`grade all`: one per exercise) a taken one is replaced at once too.

    zygote = SpawnZygote().start()                  # one interpreter importing torch now
    pid, channel, _ = zygote.spawn()                # a ready one gets its limits
    worker = Worker(zygote, setup)                  # as in fork mode: the setup is its first frame

Mode: `worker_mode()` reads `GRADE_WORKER` (`spawn` anywhere, `fork` where there is fork)
and otherwise picks spawn on Windows and macOS, fork elsewhere.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import grader.sandbox.plaincodec as plaincodec
from grader.model.paths import PACKAGE_DIR
from grader.sandbox.framing import CHUNK, recv_frame, send_frame
from grader.sandbox.limits import DEFAULT_LIMITS, ONE_THREAD_ENV
from grader.sandbox.failures import WorkerDied
from grader.sandbox.isolation import PRACTICE
from grader.sandbox.tree import for_this_os

POOL_SIZE = 1          # ready interpreters kept (one submission at a time needs one)
START_TIMEOUT = 300.0  # seconds a fresh interpreter may take to import torch (a laptop's cold disk)
PROCESS_CAP = 64       # processes in a worker's job (Windows)


def worker_mode(environ=None, platform: str | None = None, can_fork: bool | None = None) -> str:
    """"fork" or "spawn": how workers start on this machine.

    >>> worker_mode({}, "linux", True), worker_mode({}, "darwin", True), worker_mode({}, "win32", False)
    ('fork', 'spawn', 'spawn')
    >>> worker_mode({"GRADE_WORKER": "spawn"}, "linux", True), worker_mode({"GRADE_WORKER": "fork"}, "darwin", True)
    ('spawn', 'fork')
    """
    import socket

    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if can_fork is None:
        can_fork = hasattr(os, "fork") and hasattr(socket, "send_fds")
    wanted = environ.get("GRADE_WORKER", "").strip().lower()
    if wanted == "spawn" or not can_fork:
        return "spawn"
    if wanted == "fork":
        return "fork"
    # macOS: forking a process that has loaded torch and Apple's frameworks is unsafe (the
    # reason multiprocessing spawns there); fork stays available on request.
    return "spawn" if platform == "darwin" else "fork"


def worker_command(env: dict) -> list[str]:
    """The command that starts a worker: this interpreter, `-P` (no working folder on sys.path).

    On Windows a venv's python.exe is a launcher that starts the real interpreter as a child
    (which could start before the launcher joins its job): like multiprocessing, run the base
    interpreter itself, told to behave as the venv's (`__PYVENV_LAUNCHER__`). `env` is updated.
    """
    executable = sys.executable
    base = getattr(sys, "_base_executable", executable)
    if os.name == "nt" and base and os.path.normcase(base) != os.path.normcase(executable):
        env["__PYVENV_LAUNCHER__"] = executable
        executable = base
    # The grader package's own parent goes last on sys.path: an installed kit is found first,
    # a checkout run in place is found anyway.
    code = (f"import sys; sys.path.append({str(PACKAGE_DIR.parent)!r}); "
            "from grader.sandbox.spawn import main; main()")
    return [executable, "-P", "-c", code]


class PipeChannel:
    """The judge's end of a spawned worker's pipes, used by `Worker` like a socket.

    `recv(n)` honours `settimeout` on every OS: a thread reads the worker's stdout into a
    small bounded queue (no `select` on pipes, which Windows lacks), and the judge waits on
    the queue. The queue holds at most a few chunks: a worker that floods its output waits
    for the judge, as it would on a socket.
    """

    def __init__(self, proc: subprocess.Popen, tree):
        self.proc, self.tree = proc, tree
        self._chunks: queue.Queue = queue.Queue(maxsize=4)
        self._buffer = b""
        self._timeout: float | None = None
        self._eof = False
        self._closed = threading.Event()
        self.on_close = None  # the pool's: a worker done with starts the next one
        threading.Thread(target=self._pump, name=f"grade-worker-{proc.pid}", daemon=True).start()

    def _pump(self) -> None:
        reader = self.proc.stdout
        try:
            while True:
                try:
                    chunk = reader.read(CHUNK)
                except (OSError, ValueError):
                    chunk = b""
                while True:
                    try:
                        self._chunks.put(chunk or b"", timeout=0.2)
                        break
                    except queue.Full:
                        if self._closed.is_set():
                            return
                if not chunk:
                    return
        finally:
            try:
                reader.close()
                self.proc.wait()  # reap it (it has closed its end: it is gone or going)
            except (OSError, ValueError):
                pass

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout

    def recv(self, n: int) -> bytes:
        if not self._buffer:
            if self._eof:
                return b""
            try:
                chunk = self._chunks.get(timeout=self._timeout)
            except queue.Empty:
                raise TimeoutError("timed out") from None
            if not chunk:
                self._eof = True
                return b""
            self._buffer = chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def sendall(self, data: bytes) -> None:
        if self._closed.is_set():
            raise BrokenPipeError("worker closed")
        view = memoryview(data)
        while view:
            written = self.proc.stdin.write(view)
            view = view[written if written is not None else len(view):]
        self.proc.stdin.flush()

    def kill_tree(self) -> None:
        """End the worker and every process it started (see `grader.sandbox.tree`)."""
        self.tree.kill()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self.proc.stdin.close()  # a worker still waiting for a request reads EOF and exits
        except OSError:
            pass
        if self.on_close is not None:
            self.on_close(self)


class _Fresh:
    """One interpreter started ahead of need: importing torch, then waiting for its limits."""

    def __init__(self, env: dict):
        self.tree = for_this_os()
        env = dict(env)
        proc = subprocess.Popen(worker_command(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                env=env, close_fds=True, **self.tree.popen_options())
        self.tree.adopt(proc)  # Windows: into its job before it can run anything of a student's
        self.pid = proc.pid
        self.channel = PipeChannel(proc, self.tree)

    def hand_over(self, limits: dict) -> None:
        """Wait until it is ready (torch imported), set the job's limits, send its own limits."""
        self.channel.settimeout(START_TIMEOUT)
        hello = plaincodec.decode(recv_frame(self.channel))
        if not (isinstance(hello, dict) and type(hello.get("ready")) is int):
            raise OSError(f"unexpected greeting {hello!r}")
        self.tree.limit(memory=limits.get("memory"), cpu=limits.get("cpu"), processes=PROCESS_CAP)
        self.channel.settimeout(None)
        send_frame(self.channel, json.dumps(limits).encode())

    def kill(self) -> None:
        self.channel.kill_tree()
        self.channel.close()


class SpawnZygote:
    """Starts workers as fresh interpreters (see the module's docstring); `Zygote`'s interface,
    in the practice tier (the official tiers fork from a zygote inside their isolation)."""

    tier = PRACTICE

    def __init__(self, size: int = POOL_SIZE, limits: dict | None = None, **_ignored):
        self.size = max(0, size)
        self.limits = dict(limits or DEFAULT_LIMITS)
        self.pid = None
        self._ready: list[_Fresh] = []
        self._owner: int | None = None
        self._out: set[PipeChannel] = set()  # handed out, not closed yet
        self._closing = False
        self.live: set = set()  # the Workers with a process now (as Zygote.live)

    @property
    def started(self) -> bool:
        return self._owner == os.getpid()

    def start(self) -> "SpawnZygote":
        if self._owner is not None and self._owner != os.getpid():
            self._forget_inherited()  # a forked process: a pool of its own
        if self._owner is None:
            self._owner = os.getpid()
            self._top_up()
        return self

    def _env(self) -> dict:
        return {**os.environ, **ONE_THREAD_ENV}

    def _top_up(self) -> None:
        while len(self._ready) < self.size:
            self._ready.append(_Fresh(self._env()))

    def spawn(self):
        """A started worker: its pid, the judge's end of its pipes, no end pipes."""
        self.start()
        problem = None
        for _ in range(2):  # one that died before its setup (killed from outside): the next
            fresh = self._ready.pop(0) if self._ready else _Fresh(self._env())
            if self._out:  # another worker is still in use (grade all): more will be wanted
                self._top_up()  # its replacement imports torch while this one grades
            try:
                fresh.hand_over(self.limits)
                self._out.add(fresh.channel)
                fresh.channel.on_close = self._released
                return fresh.pid, fresh.channel, None  # no dump pipe: no SIGUSR1 to ask for a stack
            except (OSError, EOFError, TimeoutError, plaincodec.DecodeError) as err:
                fresh.kill()
                problem = err
        raise WorkerDied(f"a fresh worker did not start ({type(problem).__name__}: {problem})")

    def host_pid(self, pid: int) -> int:
        return pid

    def sweep(self) -> None:
        """Nothing to sweep in the practice tier."""

    def _released(self, channel: PipeChannel) -> None:
        """A worker is done with: the next one starts now (a re-grade in `grade watch` finds it ready).

        Not on taking the only worker in use: `grade ex03` needs one, and a second interpreter
        importing torch beside it would slow it down on a two-core laptop.
        """
        self._out.discard(channel)
        if self.started and not self._closing:
            self._top_up()

    def alive(self) -> bool:
        """Always: there is no zygote process to lose (a worker that dies is replaced)."""
        return True

    def _forget_inherited(self) -> None:
        """After a fork: the parent's ready workers stay the parent's; close our copies of their pipes."""
        for fresh in self._ready:
            for end in (fresh.channel.proc.stdin, fresh.channel.proc.stdout):
                try:
                    end.close()
                except OSError:
                    pass
        self._ready, self._owner, self._out = [], None, set()

    def close(self, wait: bool = True) -> None:  # noqa: ARG002 - no zygote to wait for here
        if not self.started:
            return
        self._closing = True
        for channel in list(self._out):
            channel.kill_tree()
            channel.close()
        for fresh in self._ready:
            fresh.kill()
        self._ready = []
        self._owner, self._closing = None, False
