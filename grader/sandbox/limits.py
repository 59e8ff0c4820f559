"""The limits a worker runs under, in one place, and their application (every tier).

Time is not among the rlimits: the judge measures each call's CPU and idle time
(`grader.sandbox.clock`) and stops the worker at its limit. `RLIMIT_CPU` is only the kernel's
backstop, far above any budget, for a worker the judge could no longer reach.

    apply_limits(DEFAULT_LIMITS)    # in a fresh worker, before the submission's first line
"""

from __future__ import annotations

import signal

OUTPUT_CAP = 4000  # characters of the student's printed output kept per call
FILE_SIZE_CAP = 16 * 1024 * 1024  # bytes a worker may write to any one file
DEFAULT_LIMITS = {"memory": 6 * 1024**3, "cpu": 3600, "processes": 64}
MAX_ANSWER_BYTES = 64 * 1024**2  # one answer frame from a worker (the largest real one: ex06 on the corpus)
OOM_FIRST = 1000  # /proc/self/oom_score_adj of a worker: the kernel's first choice when memory runs out
# The environment of every fresh interpreter that runs workers: native thread pools (OpenMP, MKL,
# OpenBLAS, macOS's Accelerate) on one thread, as torch.set_num_threads(1) keeps torch's own.
ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                  "VECLIB_MAXIMUM_THREADS": "1"}


def apply_limits(limits: dict, *, processes: bool = False) -> dict:
    """Set the rlimits this OS has (none on Windows: a Job Object limits the worker there);
    `processes`: cap the processes of the worker's uid too (where that uid is the worker's
    own: the official tiers). Returns what was set, by name."""
    try:
        import resource
    except ImportError:
        return {}
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-long write fails instead of killing
    wanted = [("RLIMIT_FSIZE", FILE_SIZE_CAP), ("RLIMIT_AS", limits.get("memory")),
              ("RLIMIT_CPU", limits.get("cpu")), ("RLIMIT_CORE", 0)]
    if processes:
        wanted.append(("RLIMIT_NPROC", limits.get("processes")))
    held = {}
    for name, value in wanted:
        if value is None or not hasattr(resource, name):
            continue
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
            held[name] = value
        except (ValueError, OSError):  # macOS refuses some (RLIMIT_AS below what is mapped)
            pass
    prefer_for_oom_killer()
    return held


def prefer_for_oom_killer() -> int | None:
    """Make this (worker) process the OOM killer's first choice; the value set, or None where it
    cannot be. When a student's code exhausts the machine's memory, the kernel then kills the
    worker, not the zygote or a judge."""
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(OOM_FIRST))
    except OSError:  # not Linux, or no /proc
        return None
    return OOM_FIRST


__all__ = ["OUTPUT_CAP", "FILE_SIZE_CAP", "DEFAULT_LIMITS", "MAX_ANSWER_BYTES", "apply_limits",
           "prefer_for_oom_killer"]
