"""Where a link in a cohort leads, step by step: what `realpath` alone cannot tell."""

from __future__ import annotations

import os


def resolves_through_proc(path: str, max_links: int = 40) -> bool:
    """Whether resolving `path` passes through /proc at any step: `/proc/self/cwd`, written
    relative (`../../proc/self/cwd`), reached through further links or a linked folder on the
    way. realpath alone cannot tell: it lands wherever /proc/self/cwd points (the grader's
    working folder). A chain longer than the kernel follows (a loop) is not: it is read, and
    refused, as the folder it fails to be.

        resolves_through_proc("cohort/alice")   # cohort/alice -> ../hops/there -> /proc/self/cwd: True
    """
    if os.name != "posix":
        return False  # no /proc to pass through
    pending = os.path.join(os.getcwd(), path).split("/")[::-1]  # a stack: the next name last
    current, followed = "/", 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, name)
        if candidate == "/proc" or candidate.startswith("/proc/"):
            return True
        if os.path.islink(candidate):
            followed += 1
            if followed > max_links:
                return False
            target = os.readlink(candidate)
            current = "/" if target.startswith("/") else current
            pending.extend(target.split("/")[::-1])
        else:
            current = candidate
    return False
