"""What a process of the kit loads before it serves: torch (on one thread) and the probes,
loaded with the garbage collector paused.

torch's import makes a great many objects that live as long as the process, and next to no
garbage: with the cyclic collector on, its passes walk those objects again and again while the
import goes on, for nothing. Every process that starts by loading them (the judge, a zygote, a
spawned worker) pauses it meanwhile, then freezes what it loaded when it is ready
(`gc.freeze`: no later collection walks it either).

    torch = load_torch()          # the judge, before the practice tier's zygote is forked
    load_worker_side()            # a zygote or a spawned worker: torch, the probes, the worker loop
    with collector_paused():      # anything else loaded once, at start-up
        import grader.run.session
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused", "load_torch", "load_worker_side"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic garbage collection inside; the collector as it was, afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_torch():
    """torch, its own thread pool on one thread (one thread is never slower at these sizes)."""
    with collector_paused():
        import torch

        torch.set_num_threads(1)
    return torch


def load_worker_side() -> None:
    """torch, every exercise's probes and the worker's loop: what each worker needs before a
    submission arrives."""
    with collector_paused():
        load_torch()
        import grader.sandbox.worker  # noqa: F401
        from grader.probes import import_all

        import_all()
