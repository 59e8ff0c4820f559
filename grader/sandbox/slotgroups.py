"""One cgroup per worker uid: each judge slot's processes share one slot's CPU and memory.

A worker may fork up to its process cap (64). Without these groups, on two cores 64 busy loops
left the other judge's worker about 1/65 of the CPU, and a correct ex12 ran past its 180 s
limit; and 40 processes of 150 MB each ran a 3 GB machine out of memory, so that the kernel
killed the largest worker of the run, another student's (2026-12-03, both reproduced in
`tests/sandbox/test_slotgroups.py`). Now, as root, each worker joins a cgroup of its uid (one
per judge slot, the same for every worker of that slot) under the run's own cgroup:

- CPU: the cpu controller's default weight, so the kernel shares the CPU between the slots'
  groups first, then between the processes of each;
- memory: a cap on what the slot's processes hold together (`memory_cap`: the worker's own
  memory limit, and under `grade batch` no more than the memory the run found free divided by
  its judges, never under 1 GiB). A submission that outgrows it meets the kernel's OOM killer
  inside its own group: its own processes die, never another slot's.

The worker joins as root, before it drops to its uid, so neither it nor anything it forks can
move out (the groups' files belong to root; `/sys` is read-only in the fence).

cgroup v1 (`/sys/fs/cgroup/cpu/` and `/sys/fs/cgroup/memory/`, each under the run's own cgroup
of that hierarchy) and v2 (`/sys/fs/cgroup/`, under the run's own cgroup when it may give
controllers to a child, else under the root) are used as found; elsewhere (an ordinary user,
a container whose cgroups are read-only, macOS, Windows) nothing happens and the rlimits and
time limits alone hold, as before.

    >>> join(62063, 6 << 30, 2 << 30)  # in a forked worker, as root: capped at 2 GiB
    '/sys/fs/cgroup/cpu/gpt-grade/u62063'
    >>> remove(62063)                  # once the uid's processes are gone (grader.sandbox.uids.release)
"""

from __future__ import annotations

import os

GROUP = "gpt-grade"
MEMORY_FLOOR = 1 << 30  # a slot's cap is never below this: an honest ex12 holds far less
_V1 = (("cpu", ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"), "cpu.shares"),
       ("memory", ("/sys/fs/cgroup/memory",), "memory.limit_in_bytes"))
_V2 = "/sys/fs/cgroup"
_V2_CONTROLLERS = ("cpu", "memory")
_CAP_FILE = {False: "memory.limit_in_bytes", True: "memory.max"}


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


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except OSError:
        return None


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def hierarchies() -> list[list[tuple[str, tuple[str, ...], bool]]]:
    """Where the slots' groups go: per hierarchy to join, its candidate parents, best first, as
    (folder, controllers, v2?); empty without a cpu or memory controller.

    v1: one hierarchy per controller, under this run's own cgroup in it. v2: one hierarchy,
    under the run's own cgroup, but v2 lets a group hand controllers to children only while
    it holds no process itself, so the run's own cgroup (holding the batch) usually refuses;
    then at the hierarchy's root, which is exempt."""
    found = []
    for controller, mounts, marker in _V1:
        for mount in mounts:
            if os.path.isfile(os.path.join(mount, marker)):
                found.append([(os.path.join(mount, _own_path(controller), GROUP), (controller,), False)])
                break
    if found:
        return found
    controllers = tuple(c for c in _V2_CONTROLLERS if c in (_read(os.path.join(_V2, "cgroup.controllers")) or "").split())
    if not controllers:
        return []
    own = os.path.join(_V2, _own_path(None), GROUP)
    root = os.path.join(_V2, GROUP)
    return [[(own, controllers, True)] + ([(root, controllers, True)] if root != own else [])]


def group_folders(uid: int) -> list[str]:
    """Every folder the uid's groups may be in (each hierarchy's candidates)."""
    return [os.path.join(parent, f"u{int(uid)}") for options in hierarchies() for parent, _, _ in options]


def memory_cap(worker_limit: int | None, slot_share: int | None) -> int | None:
    """What one slot's processes may hold together: the smaller of the worker's own memory
    limit and the slot's share of the run's free memory, never under MEMORY_FLOOR.

    >>> memory_cap(6 << 30, 3 << 30) == 3 << 30, memory_cap(6 << 30, 1 << 20) == MEMORY_FLOOR
    (True, True)
    """
    known = [int(v) for v in (worker_limit, slot_share) if v]
    return max(min(known), MEMORY_FLOOR) if known else None


def memory_free() -> int | None:
    """Memory this run may still use: the machine's available memory, and within the run's own
    cgroup's limit (v1 or v2) what it does not use yet; None where neither can be read."""
    found = []
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            found.append(int(line.split()[1]) * 1024)
    v1 = os.path.join("/sys/fs/cgroup/memory", _own_path("memory"))
    v2 = os.path.join(_V2, _own_path(None))
    for limit_file, usage_file in ((os.path.join(v1, "memory.limit_in_bytes"), os.path.join(v1, "memory.usage_in_bytes")),
                                   (os.path.join(v2, "memory.max"), os.path.join(v2, "memory.current"))):
        limit, usage = _read(limit_file), _read(usage_file)
        if limit and usage and limit.strip().isdigit() and usage.strip().isdigit():
            found.append(int(limit) - int(usage))
    return max(min(found), 0) if found else None


def _enable(parent: str, controllers: tuple[str, ...]) -> None:
    """v2: let `parent`'s children use the controllers (its own parent must hand them down too)."""
    enabled = False
    for controller in controllers:
        try:
            _write(os.path.join(os.path.dirname(parent), "cgroup.subtree_control"), f"+{controller}")
        except OSError:
            pass  # already on, or refused: said by the next write
        try:
            _write(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
            enabled = True
        except OSError:
            pass
    if not enabled:
        raise OSError("no controller could be handed to the slots' groups")


def join(uid: int | None, memory_limit: int | None = None, slot_share: int | None = None) -> str | None:
    """Move this process into its uid's groups, their memory capped (`memory_cap` of the
    worker's memory limit and the slot's share); the first group's folder (the CPU one under
    v1), or None if it can join none."""
    if uid is None or os.geteuid() != 0:
        return None
    memory = memory_cap(memory_limit, slot_share)
    joined = []
    for options in hierarchies():
        for parent, controllers, v2 in options:
            group = os.path.join(parent, f"u{int(uid)}")
            try:
                os.makedirs(group, exist_ok=True)
                if v2:  # a v2 group gives its children a controller only when asked (and holds no process)
                    _enable(parent, controllers)
                if memory and "memory" in controllers:
                    try:
                        _write(os.path.join(group, _CAP_FILE[v2]), str(int(memory)))
                    except OSError:
                        pass  # the controller is not handed down here: the CPU share still holds
                _write(os.path.join(group, "cgroup.procs"), "0")  # "0": the writing process itself
                joined.append(group)
                break
            except OSError:
                continue
    return joined[0] if joined else None


def remove(uid: int) -> None:
    """Take the uid's groups away once their processes are gone (an empty group; else kept)."""
    for folder in group_folders(uid):
        try:
            os.rmdir(folder)
        except OSError:
            pass
