"""A worker in a fresh interpreter: the portable way to run student code (no fork needed).

Started by the judge's `SpawnZygote` (`grader.sandbox.pool`) ahead of need, in the practice
tier, it talks over its own stdin and stdout:

    judge                                  worker (this module's main())
                                           takes fds 0/1 for itself; 0 -> devnull, 1 -> stderr
                                           imports torch (one thread), every probe, the worker loop
       <- frame: plaincodec {"ready": pid}
       -> frame: JSON limits               applied (`grader.sandbox.limits`; on Windows the judge's
                                           Job Object holds them: `grader.sandbox.tree`)
       -> frame: setup (requestcodec)      then grader.sandbox.worker.serve, as a forked worker:
       -> frame: request (requestcodec)   (the judge's, trusted)
       <- frame: plaincodec answer         (plain data only)

Nothing here calls fork, killpg, setpgid, select or signal.SIGALRM, or reads /proc.
"""

from __future__ import annotations

import gc
import json
import os
import signal

import grader.sandbox.plaincodec as plaincodec
from grader.sandbox.framing import PipePair, recv_frame, send_frame
from grader.sandbox.limits import apply_limits


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
    """What every worker needs, imported before the limits arrive (the pool waits meanwhile)."""
    from grader.sandbox.preload import load_worker_side

    load_worker_side()
    gc.freeze()  # what is loaded now lives as long as the worker: its collections never walk it


def main() -> None:
    """The worker's life: warm up, say ready, take the limits, serve; never returns."""
    pipes = _take_stdio()
    code = 0
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the judge's; a KeyboardInterrupt here is the code's own
    try:
        _warm()
        send_frame(pipes, plaincodec.encode({"ready": os.getpid()}))
        try:
            limits = json.loads(recv_frame(pipes))
        except EOFError:
            return  # the judge finished without needing this one
        apply_limits(limits)
        from grader.sandbox.worker import serve

        serve(pipes)
    except BaseException:  # noqa: BLE001 - the judge sees the pipe close (WorkerDied)
        code = 1
    finally:
        os._exit(code)


if __name__ == "__main__":
    main()
