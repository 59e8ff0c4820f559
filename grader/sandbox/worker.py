"""The worker: the only process where a submission's code runs.

It is forked from the zygote (or started as a fresh interpreter, `grader.sandbox.spawn`), reads
its setup from the judge, loads the student's exercise module, and answers requests ("run
probe P with these arguments") with plain data (see `wire`): what the student's code returned,
or the exception it raised described as data (its type, its message, the student's own
frames). Nothing here is there for trust: the whole process is the student's, and the judge
takes from it only plain data, which it judges itself.

The setup (from the judge, trusted):

    {"module": "ex03_param_budget",
     "submission": "/home/s/exercises"      # practice: imported where it is
     | "files": {"ex03_param_budget.py": b"..."},  # official: a copy in the worker's folder
     "refused": {"ex02_nll": "未读取… / not read…"},   # files the judge would not read, and why
     "pieces": {"get_batch": "<source>"},   # correct earlier pieces this exercise builds on
     "workdir": "/tmp/w1"}                  # where it works (made for it), or None: a fresh one
"""

from __future__ import annotations

import faulthandler
import functools
import importlib
import importlib.util
import inspect
import os
import re
import signal
import socket
import sys
import tempfile
import time
import types
from pathlib import Path

import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.requestcodec as requestcodec
import grader.sandbox.wire as wire
from grader.model.paths import PACKAGE_DIR
from grader.model.missing import MissingSubmissionFile
from grader.sandbox.capture import redirect_output
from grader.sandbox.exits import CHANNEL_LOST
from grader.sandbox.framing import ANSWER, PROGRESS, recv_frame, send_frame
from grader.sandbox.tracebacks import describe_error

__all__ = ["describe_error", "run_request", "serve", "resolve_probe"]


class ProbeMissing(LookupError):
    """A probe the check names does not exist: the kit's author's error, never the student's."""


def probe_module(spec: str) -> str:
    """The module of a probe: an exercise's own, or one the probes share.

    >>> probe_module("ex03.count_params_of"), probe_module("common.call_function")
    ('grader.per_exercise.ex03.probes', 'grader.probes.common')
    """
    module_name = spec.rpartition(".")[0]
    if re.fullmatch(r"ex\d+", module_name):
        return f"grader.per_exercise.{module_name}.probes"
    return f"grader.probes.{module_name}"


def resolve_probe(spec: str):
    """`"ex03.count_params_of"` -> grader.per_exercise.ex03.probes.count_params_of; ProbeMissing
    when there is no such module or function."""
    name = probe_module(spec)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and name.startswith(err.name):
            raise ProbeMissing(f"no probe module {name} (probe {spec!r})") from None
        raise
    func = getattr(module, spec.rpartition(".")[2], None)
    if not callable(func):
        raise ProbeMissing(f"no probe {spec!r} in {name}")
    return func


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

    def __init__(self, folder: str | None, module_name: str, refused: dict | None = None):
        self.folder = folder
        self.module_name = module_name
        self._refused = refused or {}  # module name -> why its file was not read ("zh / en")
        self._module = None
        self._failed: dict | None = None

    def module(self):
        if self._failed is not None:
            raise ImportFailed(self._failed)
        if self._module is None:
            path = Path(self.folder or ".") / f"{self.module_name}.py"
            if not path.is_file():
                raise MissingSubmissionFile(path.name)
            spec = importlib.util.spec_from_file_location(self.module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[self.module_name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as err:  # the student's module may raise anything, even SystemExit
                sys.modules.pop(self.module_name, None)
                self._failed = describe_error(err, self.folder, at_import=True)
                # `import helper` of a file refused alone (a link, a FIFO): the reason, not just "no module"
                missing = err.name if type(err) is ModuleNotFoundError and type(err.name) is str else None
                if missing and missing in self._refused:
                    self._failed["not_read"] = self._refused[missing]
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
        probe = resolve(request["probe"])
    except ProbeMissing as err:  # the check's own mistake: said as the kit's, before any student code
        return {"ok": False, "error": {"type": "ProbeMissing", "mro": ["ProbeMissing"], "message": str(err),
                                       "traceback": "", "not_implemented": False}}
    try:
        mod = module_source()
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


def _progress_sender(channel, every: float = 0.25):
    """A `progress(done, total)` for probes: a small frame at most every `every` s (what the
    judge shows while ex12 trains; it decides nothing)."""
    last = [0.0]
    worker = os.getpid()

    def progress(done, total) -> None:
        if os.getpid() != worker:  # a child the student's code forked: its frame could interleave
            return
        now = time.monotonic()
        if now - last[0] >= every or done >= total:
            last[0] = now
            send_frame(channel, PROGRESS + plaincodec.encode({"progress": (int(done), int(total))}))

    return progress


def _stack_on_request(dump_fd: int | None) -> None:
    """faulthandler writes the stack to `dump_fd` on SIGUSR1 (the judge, at a time limit) and on
    a fatal signal (a segfault in the student's code): the judge reads where the code was."""
    if dump_fd is None:
        return
    faulthandler.enable(file=dump_fd, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=dump_fd, all_threads=True, chain=False)


def forget_exercise_modules() -> list[str]:
    """Exercise modules inherited from the process the zygote was forked from (a test session,
    a notebook) are never the submission's: the submission's own import must find none."""
    names = [n for n in sys.modules if re.fullmatch(r"ex\d\d_\w+", n)]
    for name in names:
        del sys.modules[name]
    return names


def load_pieces(sources: dict[str, str]) -> None:
    """The correct earlier pieces an exercise builds on (ex10-ex12), sent as source by the judge:
    made into `grader.pieces.<name>` modules, which the probes take them from."""
    for name, source in sources.items():
        qualified = f"grader.pieces.{name}"
        module = types.ModuleType(qualified)
        module.__file__ = f"<grader.pieces.{name}>"
        sys.modules[qualified] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the kit's own source


def _place_files(files: dict[str, bytes], workdir: str) -> str:
    """The submission's files written into `<workdir>/submission` (read-only); that folder."""
    folder = os.path.join(workdir, "submission")
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        path = os.path.join(folder, os.path.basename(name))
        with open(path, "wb") as handle:
            handle.write(data)
        if os.name == "posix":
            os.chmod(path, 0o444)
    return folder


def serve(channel, dump_fd: int | None = None) -> None:
    """Worker main loop: read the setup, import the exercise, answer requests until the judge
    closes the channel (a socket, or a spawned worker's pipes)."""
    try:
        setup = requestcodec.unpack(recv_frame(channel))
    except EOFError:
        return
    workdir = setup.get("workdir") or tempfile.mkdtemp(prefix="grade-worker-")
    load_pieces(setup.get("pieces") or {})
    folder = _place_files(setup["files"], workdir) if "files" in setup else setup.get("submission")
    refused = dict(setup.get("refused") or {})
    forget_exercise_modules()
    _stack_on_request(dump_fd)
    os.chdir(workdir)
    if folder:
        sys.path.insert(0, folder)
    # Stand-ins for earlier exercises a submission lacks (ex11 imports ex08's get_batch).
    sys.path.append(str(PACKAGE_DIR / "earlier"))
    take_output = redirect_output(workdir, dump_fd)
    submissions: dict[str, Submission] = {}
    worker = os.getpid()

    def answer_with(blob: bytes) -> None:
        if os.getpid() != worker:
            # a child the student's code forked came back into this loop: its answer would put
            # the worker's own out of step; it ends
            os._exit(0)
        try:
            send_frame(channel, ANSWER + blob)
        except OSError:  # the student's code closed or replaced the channel's descriptor
            os._exit(CHANNEL_LOST)

    def submission(name: str) -> Submission:
        if name not in submissions:
            submissions[name] = Submission(folder, name, refused)
        return submissions[name]

    def load(name: str) -> None:
        """Import exercise module `name` now, so the judge can time the import on its own. What
        the import printed stays captured: the first call's answer carries it to the report."""
        if name not in refused:
            try:
                submission(name).module()
            except BaseException:  # noqa: BLE001 - reported to every call by run_request
                pass
        answer_with(plaincodec.encode({"ok": True, "value": "imported", "output": ""}))

    load(setup["module"])
    progress = _progress_sender(channel)
    while True:
        try:
            request = requestcodec.unpack(recv_frame(channel))  # from the judge: trusted
        except EOFError:
            return
        except Exception:  # noqa: BLE001 - not the judge's frames: the descriptor was closed or replaced
            os._exit(CHANNEL_LOST)
        if "import" in request:
            load(request["import"])
            continue
        module_name = request.get("module") or setup["module"]
        why = refused.get(module_name)
        if why:
            answer = {"ok": False, "error": {"type": "SubmissionRefused", "mro": ["SubmissionRefused"],
                                             "message": why, "traceback": "", "not_implemented": False}}
        else:
            answer = run_request(request, submission(module_name).module, folder, progress=progress,
                                 own_interrupts=True)
        try:
            answer["output"], total = take_output()
        except OSError:  # the student's code closed the capture's descriptor: its output is lost
            answer["output"], total = "", None
        if total is not None:
            answer["output_total"] = list(total)  # (characters, lines) printed: more than was kept
        try:
            blob = plaincodec.encode(answer)
        except Exception as err:  # noqa: BLE001 - a value that is not plain data after all
            blob = plaincodec.encode({"ok": False, "output": answer["output"],
                                      "error": {"type": "UnsupportedResult", "mro": ["UnsupportedResult"],
                                                "message": f"{type(err).__name__}", "traceback": "",
                                                "not_implemented": False}})
        answer_with(blob)


def channel_from_fd(fd: int) -> socket.socket:
    return socket.socket(fileno=fd)
