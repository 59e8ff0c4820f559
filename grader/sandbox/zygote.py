"""The judge's side of the workers: a zygote per run (per judge in a batch), a process per exercise.

The zygote imports torch and the probes once and forks a worker per exercise of a submission:
a worker starts in milliseconds and holds nothing of the reference or the hidden checks. How
the zygote itself starts is the tier's (`grader.sandbox.isolation`):

- practice: forked from the `grade` process before the references and checks are loaded;
- bubblewrap: a fresh interpreter inside bubblewrap (`grader.sandbox.bubblewrap`);
- container: a fresh interpreter as root; its workers drop to the slot's uid.

The judge talks to a worker over a socket pair: requests are the judge's (trusted:
`requestcodec`), answers are plain data read with `plaincodec.decode` (no pickle: nothing the
student sends can name a class or run code). A call's time is the worker's own CPU and idle
time (`grader.sandbox.clock`), looked at between short waits for its answer.

    zygote = Zygote("bubblewrap", uid=64900, unseen=[...], data=["/srv/data"]).start()
    worker = Worker(zygote, setup={"module": "ex03_param_budget", "files": {...}})
    answer, seconds = worker.run({"probe": "common.call_function", "args": ("block_params", 8)}, limit=10)
    worker.close()          # killed, and in the official tiers everything it left swept away
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import grader.sandbox.exits as exits
import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.requestcodec as requestcodec
from grader.sandbox.clock import CallClock
from grader.sandbox.failures import NoProcess, Overloaded, WorkerDied, WorkerTimeout, ZygoteGone
from grader.sandbox.framing import FrameReader, MalformedFrame, frame_kind, send_frame
from grader.sandbox.isolation import BUBBLEWRAP, CONTAINER, PRACTICE, IsolationUnavailable
from grader.sandbox.limits import DEFAULT_LIMITS, MAX_ANSWER_BYTES, ONE_THREAD_ENV

__all__ = ["Zygote", "Worker"]

START_TIMEOUT = 300.0  # seconds a fresh zygote may take to import torch (a cold disk)
STEP = 0.1  # seconds between looks at a running call's clock


class Zygote:
    """A process that forks workers on request (module docstring).

    `unseen`: paths no worker may see (the official tiers' self-check proves it before any
    worker exists); `data`: folders the workers read the lesson's data from (bubblewrap binds
    them); `uid`: the workers' unprivileged uid when run as root (official tiers)."""

    def __init__(self, tier: str = PRACTICE, *, uid: int | None = None, unseen=(), data=(), limits=None):
        self.tier, self.uid = tier, uid
        self.unseen, self.data = list(unseen), list(data)
        self.limits = dict(limits or DEFAULT_LIMITS)
        self.pid: int | None = None  # the zygote's pid as the judge sees it
        self._sock: socket.socket | None = None
        self._handle = None  # a Popen (container), a bubblewrap Sandbox, or None (forked)
        self._starts = 0
        self.live: set = set()  # the Workers with a process now (grade watch stops them on a save)

    # -- life ---------------------------------------------------------------------------------

    def config(self) -> dict:
        return {"tier": self.tier, "uid": self.uid, "unseen": self.unseen, "limits": self.limits}

    def start(self, wait: bool = True) -> "Zygote":
        """Start it (once; again after it ended). IsolationUnavailable when an official tier's
        sandbox cannot be built or its self-check finds something a worker must not see.
        `wait=False`: started, not waited for; `ready()` waits, from another thread if need be
        (start it from a thread that lives as long as it: it dies with the thread that started
        it, `PR_SET_PDEATHSIG`)."""
        if self._sock is not None:
            return self
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._starts += 1
        try:
            if self.tier == BUBBLEWRAP:
                import grader.sandbox.bubblewrap as bubblewrap

                self._handle = bubblewrap.start(theirs.fileno(), self.data)
                self.pid = self._handle.zygote_pid
                send_frame(ours, plaincodec.encode(self.config()))
            elif self.tier == CONTAINER or self._starts > 1:
                # a fresh interpreter: the container tier, and any restart (this process may
                # hold the references by now, which a forked zygote would inherit)
                self._handle = subprocess.Popen(
                    [sys.executable, "-P", "-m", "grader.sandbox.zygote_main", "--fd", str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    env=_fresh_env(), close_fds=True)
                self.pid = self._handle.pid
                send_frame(ours, plaincodec.encode(self.config()))
            else:
                self.pid = self._fork(ours, theirs)
        finally:
            theirs.close()
        self._sock = ours
        if wait:
            self._await_ready()
        return self

    def ready(self) -> "Zygote":
        """Wait until a zygote started with `start(wait=False)` is ready (IsolationUnavailable
        as `start`)."""
        self._await_ready()
        return self

    def _fork(self, ours: socket.socket, theirs: socket.socket) -> int:
        pid = os.fork()
        if pid == 0:
            ours.close()
            try:
                from grader.sandbox.zygote_main import zygote_main

                zygote_main(theirs, self.config())
            finally:
                os._exit(0)
        return pid

    def _await_ready(self) -> None:
        reader = FrameReader(self._sock, cap=1 << 20)
        end = time.monotonic() + START_TIMEOUT
        frame = None
        try:
            while frame is None and time.monotonic() < end:
                frame = reader.poll(0.5)
                if frame is None and not self._running():
                    break
            ready = plaincodec.decode(frame) if frame is not None else None
        except (EOFError, OSError, plaincodec.DecodeError):
            ready = None
        if not isinstance(ready, dict) or "ready" not in ready:
            said = self._said()
            self.close()
            raise IsolationUnavailable(f"评分的工作进程无法启动（{said}）", f"the grader's workers could not start ({said})")
        problems = self._problems(ready)
        if problems:
            self.close()
            raise IsolationUnavailable("隔离不成立，没有评分：" + "；".join(problems),
                                       "the isolation does not hold, nothing was graded: " + "; ".join(problems))

    def _problems(self, ready: dict) -> list[str]:
        """What the zygote's self-check (official tiers) found a worker could reach."""
        if self.tier == PRACTICE:
            return []
        problems = [f"visible: {p}" for p in ready.get("visible") or []]
        if self.tier == BUBBLEWRAP:
            if ready.get("network"):
                problems.append(f"network devices: {', '.join(map(str, ready['network']))}")
            if ready.get("pid") != 1:
                problems.append("no PID namespace of its own")
        return problems

    def _running(self) -> bool:
        if isinstance(self._handle, subprocess.Popen):
            return self._handle.poll() is None
        if self._handle is not None:  # a bubblewrap Sandbox
            return self._handle.proc.poll() is None
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def _said(self) -> str:
        if self.tier == BUBBLEWRAP and self._handle is not None:
            from grader.sandbox.bubblewrap import bwrap_stderr

            return bwrap_stderr(self._handle) or "no answer"
        return "no answer"

    def alive(self) -> bool:
        """False once the started zygote has ended (its end of the socket hung up)."""
        if self._sock is None:
            return True
        import select

        poller = select.poll()
        poller.register(self._sock, select.POLLIN)
        gone = select.POLLHUP | select.POLLERR | select.POLLNVAL
        return not any(events & gone for _, events in poller.poll(0))

    def close(self, wait: bool = True) -> None:
        """Let the zygote go: it kills its workers and exits when its socket closes."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        handle, self._handle = self._handle, None
        if handle is None and self.pid is not None and wait:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        elif isinstance(handle, subprocess.Popen):
            if wait:
                try:
                    handle.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    handle.kill()
        elif handle is not None:
            handle.kill()

    # -- requests -----------------------------------------------------------------------------

    def _ask(self, request: dict, fds: list[int] = ()) -> object:
        if self._sock is not None and not self.alive():
            self.close(wait=False)  # it ended (killed from outside, or by what ran in it): a new one
        if self._sock is None and self._starts:
            try:
                self.start()
            except IsolationUnavailable:  # it ran before, and cannot be started again: the grader's problem
                raise ZygoteGone(self.pid) from None
        self.start()  # never started: IsolationUnavailable says the way out
        number = secrets.randbits(62)  # a batch's judges share a zygote's socket in turn: never repeated
        body = plaincodec.encode({**request, "request": number})
        try:
            socket.send_fds(self._sock, [struct.pack("!I", len(body))], list(fds))
            self._sock.sendall(body)
            while True:  # a reply to a request of a judge killed before it read it: skipped
                (n,) = struct.unpack("!I", self._recv(4))
                reply = plaincodec.decode(self._recv(n))
                if isinstance(reply, dict) and reply.get("request") == number:
                    return reply.get("value")
        except (OSError, plaincodec.DecodeError):  # its end closed: it has gone
            raise ZygoteGone(self.pid) from None

    def _recv(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            try:
                chunk = self._sock.recv(n - len(data))
            except OSError:
                chunk = b""
            if not chunk:
                raise ZygoteGone(self.pid)
            data += chunk
        return data

    def spawn(self) -> tuple[int, socket.socket, exits.EndPipes]:
        """Fork a worker: its pid as this process sees it, the judge's end of its socket, and the
        read ends of its dump and status pipes (`exits.EndPipes`)."""
        judge_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        dump_read, dump_write = os.pipe()
        status_read, status_write = os.pipe()
        for fd in (dump_read, status_read):
            os.set_blocking(fd, False)
        ends = exits.EndPipes(dump_read, status_read)
        try:
            pid = self._ask({"fork": True}, [worker_end.fileno(), dump_write, status_write])
            if not pid:
                raise NoProcess(self.pid)
        except BaseException:
            ends.close()
            judge_end.close()
            raise
        finally:
            worker_end.close()
            os.close(dump_write)
            os.close(status_write)
        return self.host_pid(pid), judge_end, ends

    def host_pid(self, pid: int) -> int:
        """A worker's pid as this process sees it (inside bubblewrap the zygote sees another)."""
        if self.tier != BUBBLEWRAP:
            return pid
        from grader.sandbox.pids import outer_pid

        return outer_pid(self.pid, pid) or pid

    def sweep(self) -> None:
        """Official tiers: kill whatever the last worker left and remove what it wrote."""
        if self.tier != PRACTICE and self._sock is not None and self.alive():
            try:
                self._ask({"sweep": True})
            except ZygoteGone:
                self.close(wait=False)


def _killed(status: int | None) -> bool:
    """Whether a worker's wait status is a SIGKILL (one the judge did not send: it closed first)."""
    return status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _fresh_env() -> dict:
    """The environment of a zygote started as a fresh interpreter: nothing of the judge's
    (the course secret is never in it), the grader findable, native pools on one thread."""
    from grader.model.paths import PACKAGE_DIR

    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT") if k in os.environ}
    return {**keep, "PYTHONPATH": str(PACKAGE_DIR.parent), "PYTHONDONTWRITEBYTECODE": "1", **ONE_THREAD_ENV,
            "HOME": "/tmp", "TMPDIR": "/tmp"}


class Worker:
    """The judge's handle on the process that runs one exercise of one submission.

    Each exercise has its own process, which imports that exercise's module first (timed on
    its own): whatever one exercise's code does to its process reaches no other exercise's
    checks. A time-out or a crash ends the process; the next call starts a fresh one.
    """

    def __init__(self, zygote, setup: dict):
        self.zygote = zygote
        self.setup = setup
        self.module = setup["module"]
        self.pid: int | None = None
        self._sock = None
        self._ends: exits.EndPipes | None = None
        self._reader: FrameReader | None = None
        self._import_failed: WorkerTimeout | None = None
        self._killed = False
        self._workdir: str | None = None  # the practice tier's: made here, removed once its process ends

    def _ensure(self, limit: float, on_progress=None) -> float:
        """A live worker that has imported the exercise; the seconds its import cost."""
        if self._import_failed is not None:  # the module never finishes importing: not waited for again
            raise self._import_failed
        if self._sock is not None:
            return 0.0
        self.pid, self._sock, self._ends = self.zygote.spawn()
        self.zygote.live.add(self)
        setup = self.setup
        if self.zygote.tier == PRACTICE:
            # The worker shares this machine's folders: its working folder is made here and
            # removed by `close`, which kills the worker rather than letting it clean up. (An
            # official tier's is in the sandbox, emptied after each worker by the zygote's sweep.)
            self._workdir = tempfile.mkdtemp(prefix="grade-worker-")
            setup = {**setup, "workdir": self._workdir}
        self._reader = FrameReader(self._sock, MAX_ANSWER_BYTES)
        self._killed = False
        try:
            send_frame(self._sock, requestcodec.pack(setup))
        except OSError:
            self._died("worker exited before its setup")
        try:
            answer, seconds = self._wait(limit, on_progress)
        except WorkerTimeout as err:
            err.args = ("import",)
            self._import_failed = err
            raise
        if not isinstance(answer, dict) or answer.get("value") != "imported":
            self.close()
            raise WorkerDied("malformed answer to the import")
        return seconds

    def run(self, request: dict, limit: float, on_progress=None) -> tuple[dict, float]:
        """Send a probe request; (the answer as plain data, the seconds it cost the student).

        A worker that dies of a SIGKILL the judge did not send (killed from outside, the kernel's
        OOM killer), or with its zygote (killed from outside: the next spawn starts a new one),
        gets the call once more in a fresh process: code that kills itself dies twice and is
        charged as before. A zygote that ends again during that second try is the grader's
        problem (`ZygoteGone`), never the student's."""
        try:
            return self._run_once(request, limit, on_progress)
        except WorkerDied as err:
            if not (self._zygote_ended() or _killed(err.status)):
                raise
        try:
            return self._run_once(request, limit, on_progress)
        except WorkerDied:
            if self._zygote_ended():
                raise ZygoteGone(getattr(self.zygote, "pid", None)) from None
            raise

    def _zygote_ended(self) -> bool:
        """Whether the zygote this worker came from has ended (its workers end with it)."""
        return not self.zygote.alive()

    def _run_once(self, request: dict, limit: float, on_progress) -> tuple[dict, float]:
        spent = self._ensure(limit, on_progress)
        try:
            send_frame(self._sock, requestcodec.pack({**request, "module": self.module}))
        except OSError:
            self._died("worker exited between calls")
        answer, seconds = self._wait(max(0.0, limit - spent), on_progress)
        if not isinstance(answer, dict) or "ok" not in answer:
            self.close()
            raise WorkerDied("malformed answer")
        return answer, spent + seconds

    def _wait(self, limit: float, on_progress) -> tuple[object, float]:
        """The worker's next answer, and what it cost; progress frames shown on the way."""
        clock = CallClock.start(self.pid, getattr(self.zygote, "pid", None))
        while True:
            try:
                frame = self._reader.poll(STEP)
            except (EOFError, OSError) as err:
                self._died(f"worker exited ({type(err).__name__})")
            if frame is None:
                why = clock.verdict(limit)
                if why is None:
                    continue
                if why == "overloaded":
                    self.close()
                    raise Overloaded(limit, clock.wall())
                dump = self._ends.stack(self.pid) if self._ends is not None else ""
                self.close()
                raise WorkerTimeout(limit, dump, kind=why)
            try:
                kind, blob = frame_kind(frame)
                answer = plaincodec.decode(blob)
            except (MalformedFrame, plaincodec.DecodeError) as err:
                self.close()
                raise WorkerDied(f"not plain data: {err}") from None
            if kind == "progress":
                progress = answer.get("progress") if isinstance(answer, dict) else None
                if on_progress is not None and type(progress) is tuple and len(progress) == 2 \
                        and all(type(n) is int for n in progress):
                    on_progress(*progress)
                continue
            return answer, clock.charged()

    def _died(self, message: str):
        dump, status = self._ends.ended() if self._ends is not None else ("", None)
        self.close()
        raise WorkerDied(message, dump, status)

    def stop(self) -> None:
        """Kill the worker's processes now (from another thread: the call waiting on it ends as
        a worker that died)."""
        sock = self._sock
        kill_tree = getattr(sock, "kill_tree", None)  # a spawned worker's pipes: its own way
        try:
            kill_tree() if kill_tree is not None else os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, TypeError):
            pass

    def close(self) -> None:
        """End the worker process (its process group), and sweep what it left: its working
        folder (practice tier), everything it wrote and started (official tiers)."""
        if self._sock is None:
            return
        self.stop()
        self.zygote.live.discard(self)
        self._sock.close()
        self._sock = None
        if self._ends is not None:
            self._ends.close()
            self._ends = None
        self._remove_workdir()
        self.zygote.sweep()

    def _remove_workdir(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    kill = close

