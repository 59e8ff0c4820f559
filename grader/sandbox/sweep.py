"""After a worker: nothing it started runs on, nothing it wrote stays (the official tiers).

The zygote does this itself when the judge is done with a worker, before it forks the next
one, so that no exercise's code (and no student's) can reach the next:

- bubblewrap: the zygote is the sandbox's PID 1; `kill(-1, SIGKILL)` reaches every other
  process in the sandbox at once (the kernel signals them all in one pass: a process forking
  in a loop cannot outrun it), repeated until only the zygote is left; then the writable
  folders (`/tmp`, `/dev/shm`) are emptied.
- container: every process of the worker's uid is killed the same way, from a child that has
  that uid (`kill(-1)` from a uid reaches that uid's processes and no others); then what that
  uid owns in the writable folders is removed.

    kill_everything_else()            # bubblewrap, in the zygote (PID 1)
    kill_uid(65533); remove_owned(65533, WRITABLE)
"""

from __future__ import annotations

import os
import signal
import time

WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def _others() -> list[int]:
    me = os.getpid()
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) != me]


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_everything_else(patience: float = 10.0, reap=_reap) -> bool:
    """In a PID namespace's init: SIGKILL every other process, reap (`reap()`, the zygote's
    own reaper), until none is left. False if some survived `patience` s (stuck in the kernel)."""
    end = time.monotonic() + patience
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        reap()
        if not _others():
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.005)


def kill_uid(uid: int, patience: float = 10.0, reap=_reap) -> bool:
    """As root: SIGKILL every process of `uid`, from a child of that uid, until none is left."""
    end = time.monotonic() + patience
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)  # every process of this uid but this one
            except BaseException:  # noqa: BLE001 - nothing to kill (ESRCH), or the drop failed
                pass
            os._exit(0)
        os.waitpid(pid, 0)
        reap()
        if not _owned_processes(uid):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.005)


def _owned_processes(uid: int) -> list[int]:
    """The processes whose real uid is `uid` (from their status: a process that made itself
    undumpable has its /proc folder owned by root)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(name))
                        break
        except (OSError, ValueError, IndexError):
            pass
    return found


def empty(folders=WRITABLE, keep=frozenset()) -> None:
    """Remove everything inside each folder but the paths in `keep` (the folders holding what
    the sandbox binds there, made before any worker ran); the folders themselves stay."""
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path not in keep:
                _remove(path)


def entries(folders=WRITABLE) -> frozenset[str]:
    """What the folders hold now (at the zygote's start: its own, to be kept)."""
    found = set()
    for folder in folders:
        try:
            found.update(os.path.join(folder, name) for name in os.listdir(folder))
        except OSError:
            pass
    return frozenset(found)


def remove_owned(uid: int, folders=WRITABLE) -> None:
    """Remove what `uid` owns at the top of each folder (a tree it owns goes whole)."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    _remove(entry.path)
            except OSError:
                pass


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            _remove_tree(path)
        else:
            os.unlink(path)
    except OSError:
        pass


_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _remove_tree(path: str) -> None:
    """Remove a folder and all it holds, however deep a worker made it: by file descriptors (no
    path longer than one name) and without recursion (shutil.rmtree's ends in a RecursionError
    a few thousand folders down); what cannot be removed (a mount point) is left, once."""
    stack = [(os.open(path, _DIR), "", None)]  # (a folder's descriptor, its name, its (inode, device))
    stuck: set[tuple[int, int]] = set()
    while stack:
        fd = stack[-1][0]
        deeper = None
        with os.scandir(fd) as listing:
            for entry in listing:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=fd)
                        continue
                    key = (entry.inode(), entry.stat(follow_symlinks=False).st_dev)
                except OSError:
                    continue
                if key not in stuck:
                    deeper = (entry.name, key)
                    break
        if deeper is not None:
            name, key = deeper
            try:
                stack.append((os.open(name, _DIR, dir_fd=fd), name, key))
            except OSError:
                stuck.add(key)
            continue
        _, name, key = stack.pop()
        os.close(fd)
        try:
            if stack:
                os.rmdir(name, dir_fd=stack[-1][0])
            else:
                os.rmdir(path)
        except OSError:
            if key is not None:
                stuck.add(key)


__all__ = ["kill_everything_else", "kill_uid", "empty", "entries", "remove_owned", "WRITABLE"]
