"""Worker processes for student code, forked from a zygote.

The zygote is forked from the `grade` process at start-up, before the judge loads the
reference solutions or the checks, and imports torch once. Each worker is forked from the
zygote, so it starts in milliseconds with torch already loaded, and holds nothing of the
reference or the hidden checks. The judge talks to a worker over a socket pair: requests
are the judge's (trusted: `requestcodec`, plain data where that is exact, else pickle),
answers are plain data read with `plaincodec.decode` (no pickle on the judge side: nothing
the student sends can name a class or run code).

A worker runs in its own process group; the judge kills the whole group when a call runs
past its time limit, when the worker misbehaves, and at the end.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import struct
import time

import grader.sandbox.exits as exits
import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.requestcodec as requestcodec
from grader.sandbox.failures import FenceFailed, NoProcess, WorkerDied, WorkerTimeout, ZygoteGone
from grader.sandbox.framing import ForgedFrame, hmac_sha256, open_frame, recv_frame_until, send_frame
from grader.sandbox.limits import ALONE, DEFAULT_LIMITS, MAX_ANSWER_BYTES
from grader.sandbox.workdirs import remove_trees
from grader.sandbox.zygote_main import zygote_main

__all__ = ["Worker", "Zygote"]


class Zygote:
    """A process that forks workers on request. Start it before loading anything secret.

    `huge_pages`: map the zygote's heap as huge pages once it is loaded (grader.sandbox.hugepages),
    a few MiB at a time between requests: 0.05-0.3 s in all, then a fork and a worker's exit
    together about 15 ms cheaper. For runs that start many workers (`grade batch`)."""

    def __init__(self, fence: dict | None = None, huge_pages: bool = False):
        self._sock = None
        self.huge_pages = huge_pages
        self.pid = None
        self.fence = dict(fence or {})  # options for grader.sandbox.fence (uid, hide, grants, enabled)
        if "uid" not in self.fence:  # a uid of our own, so that close() can sweep it
            from grader.sandbox.uids import allocate

            # leased under a lock: no other run on the machine holds it (see grader.sandbox.uids)
            self.fence["uid"] = self.fence["gid"] = self._leased_uid = allocate()
        self._own_scratch: str | None = None  # removed at close (grader.sandbox.workdirs.run_scratch)

    def start(self, in_child=None) -> "Zygote":
        """Fork the zygote; `in_child()` runs in it first (the judge's secrets dropped there)."""
        if self._sock is not None:
            return self
        if "scratch" not in self.fence:  # where workers with no private /tmp work
            from grader.sandbox.workdirs import run_scratch

            self.fence["scratch"], self._own_scratch = run_scratch()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            ours.close()
            try:
                from grader.sandbox.fence import _pdeathsig

                _pdeathsig()  # the grade process killed (kill -9 included): the zygote goes too
                if in_child is not None:
                    in_child()
                os.umask(0o022)  # what a worker makes (its copy of the submission) its own uid can read
                zygote_main(theirs, huge_pages=self.huge_pages)
            finally:
                os._exit(0)
        theirs.close()
        self._sock, self.pid = ours, pid
        return self

    def spawn(self, setup: dict) -> tuple[int, socket.socket, exits.EndPipes]:
        """Fork a worker; returns its pid, the judge's end of its socket, and the read ends of its
        dump pipe (faulthandler's stacks, from the worker) and status pipe (its wait status, from
        the zygote alone): `exits.EndPipes`."""
        self.start()
        judge_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        dump_read, dump_write = os.pipe()
        status_read, status_write = os.pipe()
        for fd in (dump_read, status_read):
            os.set_blocking(fd, False)
        ends = exits.EndPipes(dump_read, status_read)
        request = secrets.randbits(64)
        body = json.dumps({**setup, "request": request, "fence": {**self.fence, **(setup.get("fence") or {})}}).encode()
        try:
            try:
                socket.send_fds(self._sock, [struct.pack("!I", len(body))],
                                [worker_end.fileno(), dump_write, status_write])
                self._sock.sendall(body)
            except OSError:  # its end closed: it has gone (BrokenPipeError, ECONNRESET)
                raise ZygoteGone(self.pid) from None
            while True:  # replies to requests of a judge that was killed before it read them: skipped
                answered, pid = struct.unpack("!QI", self._recv(12))
                if answered == request:
                    break
            if pid == 0:  # the zygote could not fork for 30 s (no process left to the user)
                judge_end.close()
                raise NoProcess(self.pid)
        except BaseException:
            ends.close()
            raise
        finally:
            worker_end.close()
            os.close(dump_write)
            os.close(status_write)
        return pid, judge_end, ends

    def _recv(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            try:
                chunk = self._sock.recv(n - len(data))
            except OSError:  # ECONNRESET: it died with our request unread
                chunk = b""
            if not chunk:
                raise ZygoteGone(self.pid)
            data += chunk
        return data

    def alive(self) -> bool:
        """False once the started zygote has ended. Its end of the socket closes as it exits (its
        workers close their copies first thing), before its workers get their parent-death signal:
        poll reports the hang-up on our end, in any process that holds it (a batch's judges too),
        by the time a worker's death is seen.

            zygote = ForkZygote().start()
            zygote.alive()                             # True
            os.kill(zygote.pid, signal.SIGKILL)        # from outside
            zygote.alive()                             # False, a moment later
        """
        if self._sock is None:
            return True  # not started (or closed by its owner): nothing was lost
        import select

        poller = select.poll()
        poller.register(self._sock, select.POLLIN)
        gone = select.POLLHUP | select.POLLERR | select.POLLNVAL
        return not any(events & gone for _, events in poller.poll(0))

    def close(self, wait: bool = True) -> None:
        """Kill the workers and let the zygote go (it exits when its socket closes).

        `wait=False` is for a process about to exit (`grade exNN`): it does not wait for the
        zygote to finish exiting, and as root leaves the sweep of escaped processes to the
        uid block's watchdog, which runs it as soon as this process has gone (about a second
        saved at the end of every run)."""
        if self._sock is not None:
            for proc in list(getattr(self, "_shared_workers", {}).values()):
                proc.kill()
            self._sock.close()
            self._sock = None
            if self._own_scratch is not None:
                remove_trees([self._own_scratch])
                del self.fence["scratch"]  # a restarted zygote makes a new one
                self._own_scratch = None
            if not wait:
                return
            from grader.sandbox.uids import release, sweep_uid

            sweep_uid(self.fence.get("uid"))  # what escaped its process group (setsid) dies too
            if getattr(self, "_leased_uid", None) is not None:
                release(self._leased_uid)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass


_DIGEST = hmac_sha256()
FORGED = "a frame on the worker's channel that the worker did not sign (forged answer)"


class _Process:
    """One worker process; the Workers of one submission (one per exercise) share it."""

    def __init__(self, pid: int, sock: socket.socket, ends: exits.EndPipes | None = None, key: bytes = b""):
        self.pid, self.sock, self.ends = pid, sock, ends  # no end pipes: a spawned worker (grader.sandbox.pool)
        self.imported: set[str] = set()
        self.key, self.answers = key, 0  # the answers' key, and how many signed answers came
        self.tampered: list[str] = []  # what the guard reported at an import (kept for the calls)

    def open(self, frame: bytes) -> tuple[str, bytes]:
        """A frame from this worker: ("answer", blob) signed in order, or ("progress", blob)."""
        kind, blob = open_frame(frame, self.key, self.answers, _DIGEST)
        if kind == "answer":
            self.answers += 1
        return kind, blob

    def stack(self) -> str:
        """Ask the hung worker where it is (faulthandler answers SIGUSR1 on the dump pipe)."""
        return self.ends.stack(self.pid) if self.ends is not None else ""

    def ended(self) -> tuple[str, int | None]:
        """After the worker's socket closed: what faulthandler said, and the exit status."""
        return self.ends.ended() if self.ends is not None else ("", None)

    def kill(self) -> None:
        if self.sock is not None:
            kill_tree = getattr(self.sock, "kill_tree", None)  # a spawned worker's pipes: its own way
            try:
                kill_tree() if kill_tree is not None else os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.sock.close()
            self.sock = None
        if self.ends is not None:
            self.ends.close()
            self.ends = None


class Worker:
    """The judge's handle on the worker that runs one exercise of one submission.

    Each exercise of a submission has its own worker process (a fork costs milliseconds),
    which imports that exercise's module first, timed on its own: whatever one exercise's
    code does to the process (torch's default dtype, a patched builtin) reaches no other
    exercise's checks. A time-out or a crash kills the process; the next call starts a
    fresh one.
    """

    def __init__(self, zygote: Zygote, submission: str | None, module: str, limits: dict | None = None):
        self.zygote = zygote
        self.module = module
        from grader.pieces import needed_by

        pieces = needed_by(module)
        self.setup = {"submission": submission, "module": module, "limits": limits or DEFAULT_LIMITS,
                      "pieces": list(pieces), **({"fence": {"nproc": 1}} if module in ALONE else {})}
        # Exercises share a worker only when they hold the same pieces of earlier exercises
        # (none for most): a worker grading ex08 never holds the correct get_batch.
        # One process per exercise of a submission: it has run only that exercise's file and
        # what the file imports, so nothing one exercise does at import reaches another's checks.
        self._key = (submission, module, json.dumps(self.setup["limits"], sort_keys=True), pieces)
        self._proc: _Process | None = None
        self._import_timed_out = False
        self._forged: list[str] = []  # set once its worker wrote a frame of its own: every call fails
        self._reported: list[str] = []  # the guard's reports from this exercise's processes so far

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def _sock(self) -> socket.socket | None:
        return self._proc.sock if self._proc is not None else None

    def _shared(self) -> dict:
        pool = getattr(self.zygote, "_shared_workers", None)
        if pool is None:
            pool = {}
            self.zygote._shared_workers = pool
        return pool

    def _ensure(self, deadline: float) -> float:
        """A live worker that has imported this exercise's module; the call's deadline, moved on by
        the time spent waiting for a worker to start."""
        if self._import_timed_out:  # the module never finishes importing: do not wait again
            raise WorkerTimeout("import", getattr(self, "_import_dump", ""))
        pool = self._shared()
        proc = pool.get(self._key)
        if proc is None or proc.sock is None:
            waited = time.monotonic()
            key = secrets.token_bytes(32)
            pid, sock, ends = self.zygote.spawn({**self.setup, "answer_key": key.hex()})  # imports self.module first
            deadline += time.monotonic() - waited  # waiting for a worker to start is not the student's time
            proc = pool[self._key] = _Process(pid, sock, ends, key)
            proc.tampered += self._reported  # what an earlier process of this exercise was seen doing
        else:
            if self.module in proc.imported:
                self._proc = proc
                return deadline
            try:
                send_frame(proc.sock, requestcodec.pack({"import": self.module}))
            except OSError:  # it died between calls: how (killed from outside?) decides a retry
                dump, status = proc.ended()
                proc.kill()
                raise WorkerDied("worker exited", dump, status) from None
        self._proc = proc
        try:
            kind, blob = proc.open(recv_frame_until(proc.sock, deadline, MAX_ANSWER_BYTES))
            imported = plaincodec.decode(blob) if kind == "answer" else None
            if not isinstance(imported, dict):
                raise ForgedFrame("not the import's answer")
            if "fence" in imported and proc.answers == 1:  # its first answer, signed before the import
                self.kill()
                raise FenceFailed(str(imported["fence"])[:2000])
            found = imported.get("tampered")
            if isinstance(found, list):
                proc.tampered += [t for t in found if isinstance(t, str) and t not in proc.tampered]
        except (ForgedFrame, plaincodec.DecodeError):
            proc.tampered.append(FORGED)
            self._forged = list(proc.tampered)
            self.kill()
            raise WorkerDied("worker sent a forged frame") from None
        except (TimeoutError, socket.timeout):
            self._import_timed_out = True
            self._import_dump = proc.stack()
            self.kill()
            raise WorkerTimeout("import", self._import_dump) from None
        except (EOFError, OSError) as err:
            dump, status = proc.ended()
            self.kill()
            raise WorkerDied(f"worker exited while importing ({type(err).__name__})", dump, status) from None
        proc.imported.add(self.module)
        return deadline

    def run(self, request: dict, timeout: float, on_progress=None) -> dict:
        """Send a probe request; the answer as plain data. Kills the worker on timeout.

        Progress frames (`{"progress": (done, total)}`) sent while the call runs go to
        `on_progress(done, total)`.

        A worker that dies of a SIGKILL the judge did not send (kill -9 from outside; the
        judge's own kills are time-outs) gets the call once more in a fresh process, within
        the same deadline: code that kills itself dies twice and is charged as before.
        """
        if self._forged:
            return self._forged_answer()
        deadline = time.monotonic() + timeout
        try:
            return self._run_once(request, deadline, timeout, on_progress)
        except WorkerDied as err:
            if self._forged:
                return self._forged_answer()
            if err.status is None or not os.WIFSIGNALED(err.status) or os.WTERMSIG(err.status) != signal.SIGKILL \
                    or time.monotonic() >= deadline:
                raise
        return self._run_once(request, deadline, timeout, on_progress)

    def _run_once(self, request: dict, deadline: float, timeout: float, on_progress) -> dict:
        try:
            deadline = self._ensure(deadline)
        except WorkerDied:
            if self._forged:
                return self._forged_answer()
            raise
        try:
            send_frame(self._sock, requestcodec.pack({**request, "module": self.module}))
        except OSError as err:  # it died between calls: how (killed from outside?) decides a retry
            dump, status = self._proc.ended()
            self.kill()
            raise WorkerDied(f"worker exited ({type(err).__name__})", dump, status) from None
        proc = self._proc
        while True:
            try:
                kind, answer = self._next_answer(deadline, timeout)
            except ForgedFrame:
                proc.tampered.append(FORGED)
                self._forged = list(proc.tampered)
                self.kill()
                return self._forged_answer()
            if kind == "answer":
                break
            progress = answer.get("progress") if isinstance(answer, dict) else None
            if on_progress is not None and type(progress) is tuple and len(progress) == 2 \
                    and all(type(n) is int for n in progress):
                on_progress(*progress)
        if not isinstance(answer, dict) or "ok" not in answer:
            self.kill()
            raise WorkerDied("malformed answer")
        if proc.tampered:
            found = answer.get("tampered") if isinstance(answer.get("tampered"), list) else []
            answer["tampered"] = proc.tampered + [t for t in found if t not in proc.tampered]
        return answer

    def _forged_answer(self) -> dict:
        """What a call gets once its worker wrote a frame of its own: the exercise scores 0."""
        return {"ok": False, "output": "", "tampered": list(self._forged),
                "error": {"type": "WorkerDied", "mro": ["WorkerDied"], "message": FORGED, "traceback": "",
                          "not_implemented": False}}

    def _next_answer(self, deadline: float, timeout: float):
        try:
            blob = recv_frame_until(self._sock, deadline, MAX_ANSWER_BYTES)
        except (TimeoutError, socket.timeout):
            dump = self._proc.stack()
            self.kill()
            raise WorkerTimeout(timeout, dump) from None
        except (EOFError, OSError) as err:
            dump, status = self._proc.ended()
            self.kill()
            raise WorkerDied(f"worker exited ({type(err).__name__})", dump, status) from None
        kind, blob = self._proc.open(blob)  # ForgedFrame: a frame the worker did not sign
        try:
            answer = plaincodec.decode(blob, deadline)  # reading a huge answer is the call's time too
        except plaincodec.DecodeTimeout:
            self.kill()
            raise WorkerTimeout(timeout, "") from None
        except plaincodec.DecodeError as err:
            if kind == "progress":
                raise ForgedFrame("a progress frame that is not plain data") from None
            self.kill()
            raise WorkerDied(f"not plain data: {err}") from None
        if kind == "progress" and not (isinstance(answer, dict) and set(answer) == {"progress"}):
            raise ForgedFrame("a frame dressed as progress")
        return kind, answer

    def kill(self) -> None:
        """Kill the worker process (and its process group), shared or not."""
        if self._proc is not None:
            self._reported += [t for t in self._proc.tampered if t not in self._reported]
            self._proc.kill()
            pool = self._shared()
            if pool.get(self._key) is self._proc:
                del pool[self._key]
            self._proc = None
