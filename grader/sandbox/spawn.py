"""A worker in a fresh interpreter: the portable way to run student code (no fork needed).

Started by the judge's `SpawnZygote` (`grader.sandbox.pool`) ahead of need, it talks over
its own stdin and stdout:

    judge                                  worker (this module's main())
                                           takes fds 0/1 for itself; 0 -> devnull, 1 -> stderr
                                           imports torch (one thread), every probe, the worker loop
       <- frame: plaincodec {"ready": pid}
       -> frame: JSON setup                (submission, module, limits, pieces, fence)
                                           fenced (below), then grader.sandbox.worker.serve:
       -> frame: request (requestcodec)   (the judge's, trusted)
       <- frame: plaincodec answer         (plain data only, as from a forked worker)

The fence it enters is what the OS offers without fork:

- Linux: `grader.sandbox.fence.enter`, as a forked worker (namespaces, read-only mounts,
  another uid as root, rlimits); the interpreter is single-threaded (the pool starts it
  with one-thread pools), as unsharing a user namespace requires.
- macOS, and anywhere `fence` cannot load: the rlimits `resource` offers (address space,
  CPU, file size, no core dumps) and a private working folder; the submission is copied into
  it by `grader.sandbox.intake`'s rules with portable calls only (no link followed, a linked
  or special `*.py` refused alone, sizes capped before reading), and only the copy is imported.
- Windows: no `resource`; the judge puts the worker in a Job Object (memory, CPU time,
  process count; the whole tree killed on time-out: `grader.sandbox.tree`); the same copy.

What of a submission was not read, and why, is kept in `REFUSED` (as
`grader.sandbox.fence.REFUSED` is in a forked worker), read by the worker loop before anything
of the student's runs.

Nothing here calls fork, killpg, setpgid, select or signal.SIGALRM, or reads /proc.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import grader.sandbox.intake as intake
import grader.sandbox.plaincodec as plaincodec
import grader.sandbox.workdirs as workdirs
from grader.sandbox.framing import PipePair, recv_frame, send_frame
from grader.sandbox.limits import FILE_SIZE_CAP

# What of the submission was not read, and why (grader.sandbox.intake.Refusals); set by `enter`.
REFUSED: intake.Refusals | None = None
MAX_COPY = intake.LIMITS["max_total"]  # bytes of submission copied (as the Linux fence's `max_copy`)


def _take_stdio() -> PipePair:
    """The judge's pipes on private fds; stdin reads nothing and stray prints go to stderr."""
    pipes = PipePair(os.dup(0), os.dup(1))
    if hasattr(os, "O_BINARY"):  # Windows: no newline translation on the frames
        import msvcrt

        for fd in pipes.fds():
            msvcrt.setmode(fd, os.O_BINARY)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    return pipes


def _warm() -> None:
    """What every worker needs, imported before the setup arrives (the pool waits meanwhile)."""
    import torch

    torch.set_num_threads(1)  # measured: one thread is never slower at these sizes
    import grader.probes.common  # noqa: F401
    import grader.sandbox.worker  # noqa: F401
    from grader.probes import import_all

    import_all()
    _linux_fence()


def _linux_fence():
    """grader.sandbox.fence where it works (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import grader.sandbox.fence as fence
    except ImportError:  # no resource module (a stripped-down interpreter): the portable fence
        return None
    return fence


def _rlimits(limits: dict) -> dict:
    """The rlimits this OS has (none on Windows: the judge's Job Object limits the worker there)."""
    try:
        import resource
    except ImportError:
        return {}
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-long write fails instead of killing
    held = {}
    for name, value in (("RLIMIT_FSIZE", FILE_SIZE_CAP), ("RLIMIT_AS", limits.get("memory")),
                        ("RLIMIT_CPU", limits.get("cpu")), ("RLIMIT_CORE", 0)):
        if value is None or not hasattr(resource, name):
            continue
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
            held[name] = value
        except (ValueError, OSError):  # macOS refuses some (RLIMIT_AS below what is mapped)
            pass
    return held


def enter(setup: dict, keep_fds: set[int]) -> tuple[str | None, str]:
    """Fence this worker; (folder to import the submission from, working folder).

    Off the Linux fence, the submission is read as data into `<workdir>/submission` (the only
    copy the worker imports); what was not read (a refused submission, or a file refused alone) is
    left out of it and said in `REFUSED`.
    """
    global REFUSED
    fence = _linux_fence()
    if fence is not None:
        entered = fence.enter(setup, keep_fds=keep_fds)
        REFUSED = fence.REFUSED
        return entered
    options = setup.get("fence") or {}
    workdir = workdirs.make_workdir(options.get("scratch"))
    copy = None
    if setup.get("submission"):
        copy = os.path.join(workdir, "submission")
        REFUSED = intake.copy_submission(setup["submission"], copy, {"max_total": options.get("max_copy", MAX_COPY)})
    _rlimits(setup.get("limits") or {})
    return copy, workdir


def main() -> None:
    """The worker's life: warm up, say ready, take the setup, fence, serve; never returns."""
    pipes = _take_stdio()
    code = 0
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the judge's; a KeyboardInterrupt here is the code's own
    try:
        _warm()
        send_frame(pipes, plaincodec.encode({"ready": os.getpid()}))
        try:
            setup = json.loads(recv_frame(pipes))
        except EOFError:
            return  # the judge finished without needing this one
        from grader.sandbox.worker import serve

        serve(pipes, setup, enter=lambda s, keep_fds: enter(s, set(keep_fds) | pipes.fds()))
    except BaseException:  # noqa: BLE001 - the judge sees the pipe close (WorkerDied)
        code = 1
    finally:
        os._exit(code)


if __name__ == "__main__":
    main()
