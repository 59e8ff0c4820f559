"""The worker: the only process where a submission's code runs.

It is forked from the zygote (see `sandbox`), loads the student's exercise module, and
answers requests from the judge: "run probe P with these arguments". Each answer is plain
data (see `wire`), with any exception the student's code raised described as data: its
type, its message, and the student's own frames of the traceback.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import os
import pickle
import re
import socket
import sys
import time
import traceback
from pathlib import Path

import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.wire as wire
from grader.model.paths import PACKAGE_DIR
from grader.probes.errors import MissingSubmissionFile, NotImplementedYet
from grader.sandbox.framing import recv_frame, send_frame
from grader.sandbox.limits import OUTPUT_CAP


def resolve_probe(spec: str):
    """`"ex03.count_params_of"` -> grader.probes.ex03.count_params_of."""
    module_name, _, func_name = spec.rpartition(".")
    module = importlib.import_module(f"grader.probes.{module_name}")
    return getattr(module, func_name)


def describe_error(err: BaseException, submission_dir: str | None) -> dict:
    """An exception as plain data, keeping only the student's frames."""
    frames = traceback.extract_tb(err.__traceback__)
    root = os.path.realpath(submission_dir) + os.sep if submission_dir else None
    own = [f for f in frames if root and os.path.realpath(f.filename).startswith(root)]
    lines = [f'  File "{Path(f.filename).name}", line {f.lineno}, in {f.name}\n    {(f.line or "").strip()}' for f in own]
    if isinstance(err, SyntaxError) and err.filename and root and os.path.realpath(err.filename).startswith(root):
        lines.append(f'  File "{Path(err.filename).name}", line {err.lineno}\n    {(err.text or "").strip()}')
    mro = [c.__name__ for c in type(err).__mro__]
    if type(err) is AttributeError and re.match(r"module 'ex\d\d_\w+' has no attribute", str(err)):
        mro = ["MissingName"] + mro  # a probe looked up a name the exercise file does not define
        return {"type": "MissingName", "mro": mro, "message": f"没有找到 {err.name} / {err.name} is not defined in the file",
                "traceback": "", "not_implemented": False}
    try:
        message = str(err)[:1000]
    except Exception:  # a student's exception whose __str__ fails
        message = "<unprintable>"
    return {
        "type": type(err).__name__,
        "mro": mro,
        "message": message,
        "traceback": "\n".join(lines[-6:]),
        "not_implemented": isinstance(err, (NotImplementedError, NotImplementedYet)),
    }


class Submission:
    """The student's exercise module, loaded on first use inside the worker."""

    def __init__(self, folder: str | None, module_name: str):
        self.folder = folder
        self.module_name = module_name
        self._module = None

    def module(self):
        if self._module is None:
            path = Path(self.folder) / f"{self.module_name}.py"
            if not path.is_file():
                raise MissingSubmissionFile(f"{path.name} 不在提交目录中 / is not in the submission folder")
            spec = importlib.util.spec_from_file_location(self.module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[self.module_name] = module
            spec.loader.exec_module(module)
            self._module = module
        return self._module


@functools.lru_cache(maxsize=None)
def _takes_progress(probe) -> bool:
    return "progress" in inspect.signature(probe).parameters


def run_request(request: dict, module_source, folder: str | None = None, progress=None) -> dict:
    """Run one probe on the module that `module_source()` returns; the outcome as plain data.

    `folder` is the submission folder: traceback frames from files inside it are the
    student's and are kept; the grader's own frames are left out. A probe that takes a
    `progress` argument gets `progress(done, total)` to report a long run (ex12's training).
    """
    try:
        mod = module_source()
        probe = resolve_probe(request["probe"])
        kwargs = dict(request.get("kwargs", {}))
        if progress is not None and _takes_progress(probe):
            kwargs["progress"] = progress
        value = probe(mod, *request.get("args", ()), **kwargs)
        return {"ok": True, "value": wire.to_plain(value)}
    except BaseException as err:  # the student's code may raise anything, even SystemExit
        if isinstance(err, KeyboardInterrupt):
            raise
        return {"ok": False, "error": describe_error(err, folder)}


def _redirect_output(workdir: str):
    """Send fds 1 and 2 to a capture file; returns a function that reads and resets it."""
    capture = os.open(os.path.join(workdir, "output.txt"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(capture, 1)
    os.dup2(capture, 2)
    # Whatever sys.stdout was in the parent (a test runner's capture, a terminal), the
    # student's prints now go to fds 1 and 2.
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)

    def take() -> str:
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fstat(capture).st_size == 0:
            return ""  # the usual case: nothing printed, no more system calls
        os.lseek(capture, 0, os.SEEK_SET)
        data = os.read(capture, OUTPUT_CAP + 1)
        os.ftruncate(capture, 0)
        os.lseek(capture, 0, os.SEEK_SET)
        text = data.decode("utf-8", "replace")
        return text[:OUTPUT_CAP] + ("…" if len(text) > OUTPUT_CAP else "")

    return take


def _progress_sender(sock: socket.socket, every: float = 0.25):
    """A `progress(done, total)` for probes: sends a small frame at most every `every` s."""
    last = [0.0]

    def progress(done, total) -> None:
        now = time.monotonic()
        if now - last[0] >= every or done >= total:
            last[0] = now
            send_frame(sock, plaincodec.encode({"progress": (int(done), int(total))}))

    return progress


def serve(sock: socket.socket, setup: dict, enter=None) -> None:
    """Worker main loop: answer run requests until the judge closes the socket.

    The worker is fenced first (grader.sandbox.fence: limits, namespaces, another user, the
    submission copied to a private folder); only then is the student's module loaded.
    """
    if enter is None:  # forked from the zygote; a spawned worker brings its own (grader.sandbox.spawn)
        import grader.sandbox.fence as fence

        enter = fence.enter

    # The pieces of earlier exercises this exercise builds on, and only those, are loaded
    # now; the fence then hides grader/pieces/ (see grader.pieces).
    for name in setup.get("pieces", ()):
        importlib.import_module(f"grader.pieces.{name}")
    folder, workdir = enter(setup, keep_fds={sock.fileno()})
    os.chdir(workdir)
    if folder:
        sys.path.insert(0, folder)
    # Stand-ins for earlier exercises a submission lacks (ex11 imports ex08's get_batch).
    sys.path.append(str(PACKAGE_DIR / "earlier"))
    take_output = _redirect_output(workdir)
    submissions: dict[str, Submission] = {}

    def load(name: str) -> Submission:
        """Import exercise module `name` now, so the judge can time the import on its own."""
        if name not in submissions:
            submissions[name] = Submission(folder, name)
            try:
                submissions[name].module()
            except BaseException:
                pass  # reported to every call by run_request
        send_frame(sock, plaincodec.encode({"ok": True, "value": "imported", "output": ""}))
        return submissions[name]

    load(setup["module"])
    progress = _progress_sender(sock)
    while True:
        try:
            request = pickle.loads(recv_frame(sock))  # from the judge: trusted
        except EOFError:
            return
        if "import" in request:
            load(request["import"])
            continue
        submission = submissions.get(request.get("module") or setup["module"])
        if submission is None:
            submission = submissions[request["module"]] = Submission(folder, request["module"])
        answer = run_request(request, submission.module, folder, progress=progress)
        answer["output"] = take_output()
        try:
            blob = plaincodec.encode(answer)
        except Exception as err:  # a value torch cannot save
            blob = plaincodec.encode({"ok": False, "output": answer["output"],
                                "error": {"type": "UnsupportedResult", "mro": ["UnsupportedResult"],
                                          "message": f"{type(err).__name__}", "traceback": "", "not_implemented": False}})
        send_frame(sock, blob)
