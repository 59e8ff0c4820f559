"""One CPU share per worker uid: a student's processes, however many, never starve another's.

A worker may fork up to its process cap (64) of busy loops. Without this, on two cores the
other judge's worker then got about 1/65 of the CPU and a correct ex12 ran past its 180 s
limit: one student's code cost another student 10 points (`tests/sandbox/test_cpushare.py`).
Now, as root, each worker joins a cgroup of its uid (one per judge slot, the same for every
worker of that slot) under the run's own cgroup, with the cpu controller's default weight:
the kernel shares the CPU between the slots' groups first, then between the processes of
each. The worker joins as root, before it drops to its uid, so neither it nor anything it
forks can move out (the group's files belong to root; `/sys` is read-only in the fence).

cgroup v1 (`/sys/fs/cgroup/cpu/`, under the run's own cgroup) and v2 (`/sys/fs/cgroup/`, under
the run's own cgroup when it may give `cpu` to a child, else under the root) are used as
found; elsewhere (an ordinary user, a container whose cgroups are read-only, macOS, Windows)
nothing happens and the time limits alone hold, as before.

    >>> join(62063)           # in a forked worker, as root
    '/sys/fs/cgroup/cpu/gpt-grade/u62063'
    >>> remove(62063)         # once the uid's processes are gone (grader.sandbox.uids.release)
"""

from __future__ import annotations

import os

GROUP = "gpt-grade"
_V1 = ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct")
_V2 = "/sys/fs/cgroup"


def _own_path(controller: str | None) -> str:
    """This process's cgroup path in the hierarchy of `controller` (None: the v2 one)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            for line in handle:
                _, names, path = line.rstrip("\n").split(":", 2)
                if (controller is None and names == "") or (controller in names.split(",")):
                    return path.strip("/")
    except (OSError, ValueError):
        pass
    return ""


def parents() -> list[tuple[str, bool]]:
    """Where the slots' groups may go, best first, as (folder, v2?); empty without a cpu controller.

    v1: under this run's own cgroup. v2: there too, but v2 lets a group hand the controller
    to children only while it holds no process itself, so the run's own cgroup (holding the
    batch) usually refuses; then at the hierarchy's root, which is exempt."""
    for mount in _V1:
        if os.path.isfile(os.path.join(mount, "cpu.shares")):
            return [(os.path.join(mount, _own_path("cpu"), GROUP), False)]
    try:
        with open(os.path.join(_V2, "cgroup.controllers"), encoding="utf-8") as handle:
            if "cpu" not in handle.read().split():
                return []
    except OSError:
        return []
    own = os.path.join(_V2, _own_path(None), GROUP)
    root = os.path.join(_V2, GROUP)
    return [(own, True)] + ([(root, True)] if root != own else [])


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def join(uid: int | None) -> str | None:
    """Move this process into its uid's group; the group's folder, or None if it cannot."""
    if uid is None or os.geteuid() != 0:
        return None
    for parent, v2 in parents():
        group = os.path.join(parent, f"u{int(uid)}")
        try:
            os.makedirs(group, exist_ok=True)
            if v2:  # a v2 group gives its children a controller only when asked (and holds no process)
                try:
                    _write(os.path.join(os.path.dirname(parent), "cgroup.subtree_control"), "+cpu")
                except OSError:
                    pass  # already on, or refused: said by the next write
                _write(os.path.join(parent, "cgroup.subtree_control"), "+cpu")
            _write(os.path.join(group, "cgroup.procs"), "0")  # "0": the writing process itself
            return group
        except OSError:
            continue
    return None


def remove(uid: int) -> None:
    """Take the uid's group away once its processes are gone (an empty group; else kept)."""
    for parent, _ in parents():
        try:
            os.rmdir(os.path.join(parent, f"u{int(uid)}"))
        except OSError:
            pass
