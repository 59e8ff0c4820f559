"""The uids that fenced workers run as (as root), leased so that concurrent runs never share one.

Two `grade` runs on one machine (a CI runner grading several submissions, `grade watch`
beside `grade batch`) must not give their workers the same uid: the sweep that ends one
run's leftover processes (`kill(-1)` as that uid) would kill the other run's workers. So a
process leases a *block* of 64 uids under an exclusive `flock` on a lock file
(`/run/gpt-grader/uids/<k>.lock`, or under /tmp when /run is not writable), held for the
process's lifetime: the kernel drops the lock when the process dies, kill -9 included, and
no one else can take the block while it is held. Each uid of the block is handed out once
(`allocate`) and the sweep refuses any uid this process does not hold.

    >>> uid = allocate()       # 62000 + 64*k + n, unique among every live run on the machine
    >>> sweep_uid(uid)         # kill what runs as uid (only ours; only as root)
    >>> release(uid)

As root, leasing a block also starts a small watchdog process that holds the lock too: when
the leasing process dies (kill -9 included), it sweeps every uid of the block, then exits,
and only then is the block free again. Whatever a killed run left running dies with it.
Blocks lie in 62000..65519 (below 'nobody'), 55 of them.
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import sys
import threading
import time

import grader.sandbox.mountless as mountless
from grader.sandbox.asuid import as_uid
import grader.sandbox.slotgroups as slotgroups
import grader.sandbox.workdirs as workdirs

BASE = 62000
BLOCK = 64
BLOCKS = (65534 - BASE) // BLOCK  # 55: the last block ends below 65534 ('nobody')
PR_SET_PDEATHSIG = 1

_lock = threading.Lock()
_leases: list[_Lease] = []


class _Lease:
    """One block of uids: [base, base + BLOCK), held by `fd`'s flock (None when not root)."""

    def __init__(self, index: int, fd: int | None):
        self.index, self.fd = index, fd
        self.pid = os.getpid()  # a forked child shares the block's uids but hands none out
        self.base = BASE + index * BLOCK
        self.free = list(range(self.base, self.base + BLOCK))

    def owns(self, uid: int) -> bool:
        return self.base <= uid < self.base + BLOCK


def lock_dir() -> str:
    """Where the block locks live: root-only, never a link (a local user cannot plant one)."""
    for parent, name in (("/run", "gpt-grader"), ("/tmp", "gpt-grader-root")):
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            continue
        folder = os.path.join(parent, name, "uids")
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            info = os.lstat(folder)
            top = os.lstat(os.path.join(parent, name))
        except OSError:
            continue
        if all(stat.S_ISDIR(i.st_mode) and i.st_uid == 0 and not i.st_mode & 0o022 for i in (info, top)):
            return folder
    raise OSError("no folder for the uid locks (/run and /tmp are not writable)")


def _take_block(exclude: set[int]) -> _Lease:
    if os.geteuid() != 0:
        # Workers run as the user's own uid: the fence ignores these numbers and nothing is
        # swept by uid, so there is nothing to lock.
        start = os.getpid() % BLOCKS
        index = next((start + i) % BLOCKS for i in range(BLOCKS) if (start + i) % BLOCKS not in exclude)
        return _Lease(index, None)
    folder = lock_dir()
    start = os.getpid() % BLOCKS
    order = [(start + i) % BLOCKS for i in range(BLOCKS)]
    for wait in (False, True):
        for index in order:
            if index in exclude:
                continue
            fd = os.open(os.path.join(folder, f"{index}.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except OSError:
                os.close(fd)
                continue
            lease = _Lease(index, fd)
            _sweep_block(lease)  # a run killed before its watchdog swept may have left processes
            _start_watchdog(lease)
            return lease
        print(f"grade: every block of worker uids is in use; waiting for one ({folder})", file=sys.stderr)
    raise OSError("no block of worker uids could be locked")


def allocate() -> int:
    """A uid no other live run on this machine holds, and not handed out before by this process."""
    with _lock:
        for lease in _mine():
            if lease.free:
                return lease.free.pop(0)
        lease = _take_block({lease.index for lease in _leases})
        _leases.append(lease)
        return lease.free.pop(0)


def _mine() -> list[_Lease]:
    """The blocks this very process leased (a forked child's parent hands out the inherited ones)."""
    return [lease for lease in _leases if lease.pid == os.getpid()]


def release(uid: int) -> None:
    """Give `uid` back (after its processes were swept): the next `allocate` may hand it out.
    Its CPU and memory groups go too when empty (`grader.sandbox.slotgroups`; else the next run reuses them)."""
    slotgroups.remove(uid)
    with _lock:
        for lease in _mine():
            if lease.owns(uid) and uid not in lease.free:
                lease.free.insert(0, uid)


def owns(uid) -> bool:
    """Whether `uid` is in a block this process (or the process it was forked from) leased."""
    return isinstance(uid, int) and any(lease.owns(uid) for lease in _leases)


def slot_uid(slot: int) -> int:
    """The uid of slot `slot` of this process's first block (compatibility; prefer `allocate`)."""
    with _lock:
        if not _mine():
            _leases.append(_take_block({lease.index for lease in _leases}))
        lease = _mine()[0]
    uid = lease.base + slot % BLOCK
    with _lock:
        if uid in lease.free:
            lease.free.remove(uid)
    return uid


def processes_of(uids, strict: bool = False) -> dict[int, list[int]]:
    """{uid: [pid, …]} of the live processes whose (effective) uid is in `uids`, from /proc
    (an unreadable /proc: none found, or OSError when `strict`)."""
    wanted = set(uids)
    found: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        if strict:
            raise
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                uid = os.stat(f"/proc/{entry}").st_uid
            except OSError:
                continue
            if uid in wanted:
                found.setdefault(uid, []).append(int(entry))
    return found


def sweep_uid(uid: int, wait: bool = True) -> None:
    """Kill every process running as `uid` (from a short-lived child: kill(-1) as that user).

    Only as root and only for a uid this run leased: another run's workers are never touched.
    `wait=False` (between two students of one judge) does not wait for the killed processes to
    finish tearing down: with SIGKILL pending none runs another line, and the run's last sweep
    waits for them all.
    """
    if not isinstance(uid, int) or uid < 1000 or uid >= 65534 or os.geteuid() != 0 or not owns(uid):
        return  # never as root, never a system user, never "nobody", never another run's uid
    _kill_all(uid, wait)
    workdirs.clear([uid])  # its workers' folders where they had no private /tmp
    mountless.sweep_leftovers([uid])  # and what they left in the shared temporary folders


def _kill_all(uid: int, wait: bool) -> None:
    # Each process once, through a pidfd; a process that has SIGKILL pending can run no more of
    # its own code (nor finish a fork), so only processes new since the last pass need another.
    # No fork of this (large) process: tens of milliseconds saved after every student.
    killed: set[int] = set()
    for _ in range(3):
        left = _live_processes(uid)
        fresh = None if left is None else [pid for pid in left if pid not in killed]
        if fresh is not None and not fresh:
            return
        if fresh is None or not _kill_each(uid, fresh, wait=1.0 if wait else 0.0):
            break
        killed.update(fresh)
    _kill_as(uid)  # still new ones (a fork bomb), or /proc cannot be read: kill(-1) as that user


def _live_processes(uid: int) -> list[int] | None:
    """The pids of `uid` that have not exited (zombies left out: the zygote reaps them), or None
    when /proc cannot be read."""
    try:
        pids = processes_of([uid], strict=True).get(uid, [])
    except OSError:
        return None
    live = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                state = stat_file.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            live.append(pid)
    return live


def _kill_each(uid: int, pids: list[int], wait: float = 1.0) -> bool:
    """SIGKILL each of `pids` through a pidfd, after checking (through that pidfd's process)
    that it still runs as `uid`: a pid reused meanwhile is never hit. Then wait (at most
    `wait` s) until each has exited: a process holding torch takes milliseconds to tear down,
    and the caller's next step (the next student, the end of the run) must not find it.
    False without pidfds."""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return False
    import select

    dying = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        try:
            # While the pidfd's process lives its pid cannot be reused, so /proc/<pid> is it.
            if os.stat(f"/proc/{pid}").st_uid == uid:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                dying.append(fd)
                continue
        except OSError:
            pass
        os.close(fd)
    end = time.monotonic() + wait
    try:
        while dying and wait and time.monotonic() < end:  # a pidfd turns readable when its process has exited
            done, _, _ = select.select(dying, [], [], max(0.0, end - time.monotonic()))
            dying = [fd for fd in dying if fd not in done]
            for fd in done:
                os.close(fd)
    finally:
        for fd in dying:
            os.close(fd)
    return True


def _kill_as(uid: int) -> None:
    def kill_all() -> None:
        for _ in range(3):  # a fork bomb may still be spawning
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break

    as_uid(uid, kill_all)  # kill(-1) as anyone else would be a disaster: as_uid checks the drop


def _sweep_block(lease: _Lease) -> None:
    for uid in processes_of(range(lease.base, lease.base + BLOCK)):
        _kill_as(uid)
    workdirs.clear(range(lease.base, lease.base + BLOCK))
    mountless.sweep_leftovers(range(lease.base, lease.base + BLOCK))


def _start_watchdog(lease: _Lease) -> None:
    """Fork a process that sweeps the block once this process has died, then frees it.

    It leaves the process group (a `kill -9` of the group must not take it along), keeps only
    the lock's fd, and polls its parent: prctl's parent-death signal wakes it at once, the
    poll catches the case where that signal fired for a thread rather than the process.
    """
    parent = os.getpid()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return
    code = 0
    try:
        os.setsid()
        _close_all_but(lease.fd)
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        while os.getppid() == parent:
            signal.sigtimedwait({signal.SIGTERM}, 1.0)
        for _ in range(2):
            _sweep_block(lease)
        for uid in range(lease.base, lease.base + BLOCK):  # their groups, now empty (slotgroups)
            slotgroups.remove(uid)
    except BaseException:  # noqa: BLE001  nothing of the parent's may run here
        code = 1
    finally:
        os._exit(code)


def _close_all_but(keep: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass
