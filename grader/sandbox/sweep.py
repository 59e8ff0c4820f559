"""After a worker: nothing it started runs on, nothing it wrote stays (the official tiers).

The zygote does this itself when the judge is done with a worker, before it forks the next
one, so that no exercise's code (and no student's) can reach the next:

- bubblewrap: the zygote is the sandbox's PID 1; `kill(-1, SIGKILL)` reaches every other
  process in the sandbox at once (the kernel signals them all in one pass: a process forking
  in a loop cannot outrun it), repeated until only the zygote is left; then the writable
  folders (`/tmp`, `/dev/shm`) are emptied, but for the folders bubblewrap itself made there
  on the way to what it bound (`skeleton`).
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


def skeleton(folders=("/tmp", "/dev/shm")) -> frozenset[str]:
    """What the sandbox itself holds in its writable folders before any worker runs: the folders
    bubblewrap made on the way to what it bound there (an interpreter, a kit or data that live
    under the host's /tmp) and those bound paths. `empty` keeps them and never enters a bound one.

        skeleton()   # frozenset({'/tmp/ci', '/tmp/ci/venv'}) where the venv is /tmp/ci/venv
    """
    found: set[str] = set()
    for top in folders:
        try:
            device = os.lstat(top).st_dev
        except OSError:
            continue
        for root, dirs, files in os.walk(top):
            found.update(os.path.join(root, name) for name in [*dirs, *files])
            dirs[:] = [d for d in dirs if not _mounted(os.path.join(root, d), device)]
    return frozenset(found)


def _mounted(path: str, device: int) -> bool:
    """Whether `path` lies on another file system than `device` (something bound there)."""
    try:
        return os.lstat(path).st_dev != device
    except OSError:
        return True


def empty(folders=WRITABLE, keep: frozenset[str] = frozenset()) -> bool:
    """Remove everything inside each folder (the folders themselves stay) but `keep`
    (`skeleton()`); False when something of `keep` is gone (a worker moved it away)."""
    for folder in folders:
        try:
            names = os.listdir(folder)
            device = os.lstat(folder).st_dev
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path not in keep:
                _remove(path)
            elif os.path.isdir(path) and not os.path.islink(path) and not _mounted(path, device):
                empty([path], keep)  # a folder on the way to something bound: what a worker added in it goes
    return all(os.path.lexists(path) for path in keep)


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
        with os.scandir(fd) as entries:
            for entry in entries:
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


__all__ = ["kill_everything_else", "kill_uid", "skeleton", "empty", "remove_owned", "WRITABLE"]
