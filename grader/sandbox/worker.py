"""The worker: the only process where a submission's code runs.

It is forked from the zygote (see `sandbox`), loads the student's exercise module, and
answers requests from the judge: "run probe P with these arguments". Each answer is plain
data (see `wire`), with any exception the student's code raised described as data: its
type, its message, and the student's own frames of the traceback.
"""

from __future__ import annotations

import faulthandler  # here, not in the worker: a module new in sys.modules would move its version tag
import functools
import importlib
import importlib.util
import inspect
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.requestcodec as requestcodec
import grader.sandbox.wire as wire
from grader.model.paths import PACKAGE_DIR
from grader.probes.errors import MissingSubmissionFile
from grader.sandbox.framing import ANSWER, PROGRESS, hmac_sha256, mac_input, recv_frame, send_frame
from grader.sandbox.capture import redirect_output
from grader.sandbox.exits import CHANNEL_LOST, FenceBreached
from grader.sandbox.tracebacks import describe_error

__all__ = ["describe_error", "run_request", "serve"]


def resolve_probe(spec: str):
    """`"ex03.count_params_of"` -> grader.probes.ex03.count_params_of."""
    module_name, _, func_name = spec.rpartition(".")
    module = importlib.import_module(f"grader.probes.{module_name}")
    return getattr(module, func_name)


class ImportFailed(Exception):
    """The exercise file raised while it was imported; `described` is that error, as data."""

    def __init__(self, described: dict):
        super().__init__(described.get("message", ""))
        self.described = described


class Submission:
    """The student's exercise module, loaded on first use inside the worker.

    A file that does not import (a syntax error, a NameError at module level) is tried
    once: every later call gets the same described error, marked `import_error`, so the
    report can say it once for the exercise.
    """

    def __init__(self, folder: str | None, module_name: str, admit=None, refused=None):
        self.folder = folder
        self.module_name = module_name
        self._admit = admit or sys.modules.__setitem__  # the guard's (`Guard.admit`) in a worker
        self._refused = refused  # module name -> why its file was not read (intake.Refusals.of), or None
        self._module = None
        self._failed: dict | None = None

    def module(self):
        if self._failed is not None:
            raise ImportFailed(self._failed)
        if self._module is None:
            path = Path(self.folder) / f"{self.module_name}.py"
            if not path.is_file():
                raise MissingSubmissionFile(path.name)
            spec = importlib.util.spec_from_file_location(self.module_name, path)
            module = importlib.util.module_from_spec(spec)
            self._admit(self.module_name, module)
            try:
                spec.loader.exec_module(module)
            except BaseException as err:  # the student's module may raise anything, even SystemExit
                # KeyboardInterrupt too: a worker ignores SIGINT (Ctrl-C is the judge's), so any is the code's own
                sys.modules.pop(self.module_name, None)
                self._failed = describe_error(err, self.folder, at_import=True)
                # `import helper` of a file refused alone (a link, a FIFO): the reason, not just "no module"
                missing = err.name if type(err) is ModuleNotFoundError and type(err.name) is str else None
                why = self._refused(missing) if missing and self._refused is not None else None
                if why:
                    self._failed["not_read"] = why
                raise ImportFailed(self._failed) from None
            self._module = module
        return self._module


@functools.lru_cache(maxsize=None)
def _takes_progress(probe) -> bool:
    return "progress" in inspect.signature(probe).parameters


def run_request(request: dict, module_source, folder: str | None = None, progress=None,
                resolve=resolve_probe, own_interrupts: bool = False) -> dict:
    """Run one probe on the module that `module_source()` returns; the outcome as plain data.

    `folder` is the submission folder: traceback frames from files inside it are the
    student's and are kept; the grader's own frames are left out. A probe that takes a
    `progress` argument gets `progress(done, total)` to report a long run (ex12's training).
    `own_interrupts`: a KeyboardInterrupt is the code's own error (in a worker, which ignores
    SIGINT), not Ctrl-C stopping the run (in the judge's process, the references).
    """
    try:
        mod = module_source()
        probe = resolve(request["probe"])
        kwargs = dict(request.get("kwargs", {}))
        if progress is not None and _takes_progress(probe):
            kwargs["progress"] = progress
        value = probe(mod, *request.get("args", ()), **kwargs)
        return {"ok": True, "value": wire.to_plain(value)}
    except BaseException as err:  # the student's code may raise anything, even SystemExit
        if isinstance(err, KeyboardInterrupt) and not own_interrupts:
            raise
        if isinstance(err, ImportFailed):
            return {"ok": False, "error": err.described}
        try:
            return {"ok": False, "error": describe_error(err, folder)}
        except BaseException:  # noqa: BLE001 - an exception too strange to describe (its frames, its class)
            return {"ok": False, "error": {"type": "UndescribableError", "mro": ["UndescribableError"],
                                           "message": "<unprintable>", "traceback": "", "not_implemented": False}}


def _progress_sender(sock: socket.socket, every: float = 0.25):
    """A `progress(done, total)` for probes: sends a small frame at most every `every` s
    (unsigned: it holds no key, and the judge takes nothing from it but the bar); from the
    worker only, never from a child the student's code forked (its frame could interleave)."""
    last = [0.0]
    worker = os.getpid()

    def progress(done, total) -> None:
        if os.getpid() != worker:
            return
        now = time.monotonic()
        if now - last[0] >= every or done >= total:
            last[0] = now
            send_frame(sock, PROGRESS + plaincodec.encode({"progress": (int(done), int(total))}))

    return progress


def _stack_on_request(dump_fd: int | None) -> None:
    """faulthandler writes the stack to `dump_fd` on SIGUSR1 (the judge, at a time limit) and on
    a fatal signal (a segfault in the student's code): the judge reads where the code was."""
    if dump_fd is None:
        return
    faulthandler.enable(file=dump_fd, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=dump_fd, all_threads=True, chain=False)


def forget_exercise_modules() -> list[str]:
    """Exercise modules inherited from the process the zygote was forked from (a test session,
    a notebook) are never the submission's: the submission's own import must find none.
    Returns the names taken out."""
    names = [n for n in sys.modules if re.fullmatch(r"ex\d\d_\w+", n)]
    for name in names:
        del sys.modules[name]
    return names


def serve(sock: socket.socket, setup: dict, dump_fd: int | None = None, enter=None, guard=None) -> None:
    """Worker main loop: answer run requests until the judge closes the socket.

    The worker is fenced first (grader.sandbox.fence: limits, namespaces, another user, the
    submission copied to a private folder); only then is the student's module loaded.
    `dump_fd` is a pipe to the judge for faulthandler's stack dumps (see `_stack_on_request`).
    `guard` is a `Guard` the zygote sealed before forking (and `enter` its fence, bound then:
    the sealed process imports nothing of the grader's hidden modules again); without one the
    worker seals its own (a spawned worker, grader.sandbox.spawn).
    """
    # The answers' key: a local of this loop and nothing else (see grader.sandbox.framing).
    key = bytes.fromhex(setup.pop("answer_key", "") or "")
    digest, pack, send, encode, unpack = hmac_sha256(), mac_input, send_frame, plaincodec.encode, requestcodec.unpack
    signed = [0]  # answers sent so far: each signature covers its number
    if enter is None:  # forked from the zygote; a spawned worker brings its own (grader.sandbox.spawn)
        import grader.sandbox.fence as fence

        enter = fence.enter
    # The pieces of earlier exercises this exercise builds on, and only those, are loaded
    # now; the fence then hides grader/pieces/ (see grader.pieces).
    for name in setup.get("pieces", ()):
        importlib.import_module(f"grader.pieces.{name}")
    try:
        folder, workdir = enter(setup, keep_fds={sock.fileno()} | ({dump_fd} if dump_fd is not None else set()))
    except FenceBreached as err:  # before any code of the submission's: said, signed, and the worker ends
        blob = encode({"ok": False, "fence": str(err)})
        send(sock, ANSWER + digest(key, pack(0, blob), "sha256") + blob)
        return
    _stack_on_request(dump_fd)
    os.chdir(workdir)
    if folder:
        sys.path.insert(0, folder)
    # Stand-ins for earlier exercises a submission lacks (ex11 imports ex08's get_batch).
    sys.path.append(str(PACKAGE_DIR / "earlier"))
    take_output = redirect_output(workdir)
    submissions: dict[str, Submission] = {}
    # What of the submission could not be read as data (grader.sandbox.intake.Refusals: all of it,
    # or a file alone): said by the fence that entered it (grader.sandbox.fence, or a spawned
    # worker's grader.sandbox.spawn). (Read from the function's own globals: in a worker of a
    # sealed zygote its module is no longer in sys.modules.)
    refusals = (getattr(enter, "__globals__", None) or {}).get("REFUSED")
    refused = refusals.of if refusals is not None else lambda _module: None
    # Last before the student's first line: the observers out of reach, verified after each call.
    if guard is None:
        from grader.sandbox.guard import Guard

        forget_exercise_modules()
        guard = Guard()
        guard.seal()
    else:
        guard.resync()
    check = guard.check  # the bound method: rebinding Guard.check later changes nothing here

    worker, leave = os.getpid(), os._exit  # bound before the student's first line

    def answer_with(blob: bytes) -> None:
        if os.getpid() != worker:
            # A child the student's code forked came back into this loop (its fork failed under
            # the process cap, or it just returned): it holds the key and the count, and an answer
            # from it would put the worker's own next one out of step (read as forged). It ends.
            leave(0)
        mac = digest(key, pack(signed[0], blob), "sha256")
        signed[0] += 1
        try:
            send(sock, ANSWER + mac + blob)
        except OSError:  # the student's code closed or replaced the channel's descriptor
            leave(CHANNEL_LOST)

    def load(name: str) -> Submission:
        """Import exercise module `name` now, so the judge can time the import on its own."""
        if name not in submissions and not refused(name):
            submissions[name] = Submission(folder, name, admit=guard.admit, refused=refused)
            try:
                submissions[name].module()
            except BaseException:
                pass  # reported to every call by run_request
        tampered = check(thorough=True)
        answer_with(encode({"ok": True, "value": "imported", "output": "",
                            **({"tampered": tampered} if tampered else {})}))
        return submissions.get(name)

    load(setup["module"])
    progress = _progress_sender(sock)
    while True:
        try:
            request = unpack(recv_frame(sock))  # from the judge: trusted (grader.sandbox.requestcodec)
        except EOFError:
            return
        except Exception:  # noqa: BLE001 - not the judge's frames: the descriptor was closed or replaced
            leave(CHANNEL_LOST)
        if "import" in request:
            load(request["import"])
            continue
        module_name = request.get("module") or setup["module"]
        submission = submissions.get(module_name)
        if submission is None:
            submission = submissions[module_name] = Submission(folder, module_name, admit=guard.admit,
                                                               refused=refused)
        why = refused(module_name)
        if why:
            answer = {"ok": False, "error": {"type": "SubmissionRefused", "mro": ["SubmissionRefused"],
                                             "message": why, "traceback": "", "not_implemented": False}}
        else:
            answer = run_request(request, submission.module, folder, progress=progress, resolve=guard.probe,
                                 own_interrupts=True)
        tampered = check()
        if tampered:
            answer["tampered"] = tampered  # the judge scores this exercise 0 and names what changed
        try:
            answer["output"], total = take_output()
        except OSError:  # the student's code closed the capture's descriptor: its output is lost
            answer["output"], total = "", None
        if total is not None:
            answer["output_total"] = list(total)  # (characters, lines) printed: more than was kept
        try:
            blob = encode(answer)
        except Exception as err:  # a value torch cannot save
            blob = encode({"ok": False, "output": answer["output"],
                           "error": {"type": "UnsupportedResult", "mro": ["UnsupportedResult"],
                                     "message": f"{type(err).__name__}", "traceback": "", "not_implemented": False},
                           **({"tampered": tampered} if tampered else {})})
        answer_with(blob)
