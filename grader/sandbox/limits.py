"""The limits a worker runs under, in one place: the zygote sets them, the fence applies them."""

from __future__ import annotations

import os

OUTPUT_CAP = 4000  # characters of the student's printed output kept per call
FILE_SIZE_CAP = 16 * 1024 * 1024  # bytes a worker may write to any one file
DEFAULT_LIMITS = {"memory": 6 * 1024**3, "cpu": 900}
MAX_ANSWER_BYTES = 64 * 1024**2  # one answer frame from a worker (the largest real one: ~10 MB, ex06 on the corpus)
OOM_FIRST = 1000  # /proc/self/oom_score_adj of a worker: the kernel's first choice when memory runs out
# Exercise modules whose checks watch the student's torch calls from the calling thread: ex02's
# forbidden-API net is a TorchDispatchMode, which no other thread carries, nor a process that
# starts a fresh interpreter. Their workers may start neither: RLIMIT_NPROC 1, wherever it is
# counted for the worker alone (as root, its leased uid; as a user, its own user namespace).
ALONE = frozenset({"ex02_nll"})


def prefer_for_oom_killer() -> int | None:
    """Make this (worker) process the OOM killer's first choice; the value set, or None where it cannot be.

    When a student's code exhausts the machine's memory, the kernel kills the process with the
    highest badness; without this it could be the zygote or a judge holding torch (the batch
    then stops for everyone). Raising needs no privilege; a worker set so as root keeps the
    value as its floor after dropping to its uid, so the student cannot lower it again.

        >>> prefer_for_oom_killer()            # in a forked worker, on Linux
        1000
    """
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(OOM_FIRST))
    except OSError:  # not Linux, or no /proc
        return None
    return OOM_FIRST


def nproc_counts_per_user_namespace() -> bool:
    """Whether RLIMIT_NPROC counts the processes of a uid in each user namespace on its own
    (Linux 5.14 and later, ucounts): then a worker in a user namespace of its own may cap its
    processes without counting every other process of the user (as an ordinary user, a
    student's fork bomb stops at the cap instead of taking the user's or the machine's last
    process, which the zygote's next fork needs).

        >>> nproc_counts_per_user_namespace()   # on Linux 6.1
        True
    """
    try:
        major, minor = (int(part) for part in os.uname().release.split(".")[:2])
    except (AttributeError, ValueError):
        return False
    return (major, minor) >= (5, 14)
