"""As root where a worker cannot have a mount namespace of its own: secrets closed by their modes.

Docker's default profile runs the kit as root but without CAP_SYS_ADMIN, and its seccomp
filter refuses unshare(2): a worker still drops to a leased uid (grader.sandbox.uids), but it
shares the machine's file system, so the mounts that cover the reference, the hidden checks,
a batch's DIR and OUT and the cache's private folders (grader.sandbox.fence) are not there.
What they would cover is then closed to other users (mode o-rwx) by the judge before any
worker starts, since a worker's uid is "other" to every file (no groups, no file of its own
outside its working folder); a path that cannot be closed (a read-only file system) stops the
run before any student code runs. Each worker checks again, as its own uid, before the import.

    >>> if mounts_refused():
    ...     closed, still_open = close_to_others(["/kit/solutions", "/kit/grader/checks"])

Only what is open is changed: a kit under a folder others cannot enter already is left alone.
"""

from __future__ import annotations

import os
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
_refused: bool | None = None


def mounts_refused() -> bool:
    """Whether this root process's workers would be refused a mount namespace (asked once, in a
    forked child that tries; never on other systems or as an ordinary user)."""
    global _refused
    if _refused is None:
        _refused = sys.platform.startswith("linux") and os.geteuid() == 0 and not _child_unshares()
    return _refused


def students_fenced_apart() -> bool:
    """Whether one student's worker is kept from another's files (their folders in DIR, OUT, the
    gradebook) here: as root on Linux always (the mounts, or modes closed by `close_to_others`,
    and a uid per slot); as a user only where a user namespace with mounts of its own can be had;
    never on Windows or macOS, where workers run as the user who grades."""
    if not sys.platform.startswith("linux"):
        return False
    return os.geteuid() == 0 or _child_unshares(CLONE_NEWUSER | CLONE_NEWNS)


def _child_unshares(flags: int = CLONE_NEWNS) -> bool:
    import ctypes

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if ctypes.CDLL(None, use_errno=True).unshare(flags) == 0 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def open_to_others(path: str) -> bool:
    """Whether a user with no claim on `path` (not its owner, not in its group) can reach it:
    every folder above searchable by others, and the path itself readable (a folder: readable
    or searchable, since a known name inside is enough)."""
    try:
        mode = os.stat(path).st_mode
        folder = os.path.dirname(os.path.abspath(path))
        while True:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    except OSError:
        return False
    wanted = stat.S_IROTH | stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
    return bool(mode & wanted)


def close_to_others(paths) -> tuple[list[str], list[tuple[str, str]]]:
    """Take every permission of others off each path they can reach; (paths closed now,
    [(path, why) still open])."""
    closed, still_open, places = [], [], {}
    for path in paths:
        places.setdefault(os.path.realpath(path), path)  # each place once, however it was named
    for path in places.values():
        if not open_to_others(path):
            continue
        try:
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o007)
            closed.append(path)
        except OSError as err:
            still_open.append((path, err.strerror or str(err)))
    return closed, still_open


def readable_here(paths) -> list[str]:
    """The paths this process can read or enter (a worker's check, as its own uid)."""
    return [p for p in paths if os.access(p, os.R_OK) or (os.path.isdir(p) and os.access(p, os.X_OK))]


def unreachable(paths) -> list[str]:
    """The existing paths a worker's uid could not read (the interpreter's folders it imports from)."""
    return [p for p in paths if os.path.exists(p) and not open_to_others(p)]


SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")  # every user may write here
SHARED_DEPTH = 12  # how deep the look for folders every user may write to goes below them
SHARED_FOLDERS = 20_000  # at most this many folders listed in that look (once a run), the nearest first
IPC_RMID = 0
_shared: list[str] | None = None


def shared_folders() -> list[str]:
    """Every folder a worker's uid may write to besides its own: the shared temporary folders,
    and the folders below them that every user may write to and reach (a sticky `/tmp/.X11-unix`,
    an instructor's 0777 scratch folder in /tmp). Found once a process (the batch's start, which
    its judges inherit); one a student's uid makes later is its own, and goes whole."""
    global _shared
    if _shared is None:
        _shared = writable_folders(SHARED_TEMP)
    return _shared


def writable_folders(roots, depth: int = SHARED_DEPTH, folders: int = SHARED_FOLDERS) -> list[str]:
    """Of `roots` and the folders below them that others can reach (`depth` levels down,
    `folders` folders listed in all, level by level: the nearest first; the files in them,
    however many, cost a look each but count for nothing), those others may write to."""
    found, level = [], []
    for root in roots:
        try:
            mode = os.stat(root).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) and mode & stat.S_IWOTH:
            found.append(root)
        if stat.S_ISDIR(mode) and mode & stat.S_IXOTH:
            level.append(root)
    budget = folders
    for _ in range(depth + 1):
        below = []
        for folder in level:
            budget -= 1
            if budget < 0:
                return found
            try:
                with os.scandir(folder) as listing:
                    for entry in listing:
                        try:
                            if not entry.is_dir(follow_symlinks=False):  # the listing's own type: no stat
                                continue
                            mode = entry.stat(follow_symlinks=False).st_mode
                        except OSError:  # gone since the listing
                            continue
                        if stat.S_ISDIR(mode) and mode & stat.S_IXOTH:
                            if mode & stat.S_IWOTH:
                                found.append(entry.path)
                            below.append(entry.path)
            except OSError:
                continue
        level = below
    return found


def sweep_leftovers(uids) -> None:
    """Where workers share the machine's temporary folders (mounts refused): what `uids` left
    there and in System V IPC (files in /tmp, 96 MB in /dev/shm, a message queue), which the
    next student a slot's uid grades could read, and which would pile up in memory over a
    cohort. The entries these uids own in every folder of `shared_folders()`; never raises."""
    if not _refused:
        return
    wanted = set(uids)
    from grader.sandbox.workdirs import remove_trees

    remove_trees([path for folder in shared_folders() for path in owned_at(folder, wanted)])
    _remove_ipc(wanted)


def owned_at(folder: str, wanted: set[int]) -> list[str]:
    """The entries of `folder` that `wanted` uids own. One gone since the listing is passed
    over: never a reason to skip the folder."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.stat(follow_symlinks=False).st_uid in wanted:
                        found.append(entry.path)
                except OSError:
                    continue
    except OSError:
        pass
    return found


def _remove_ipc(wanted: set[int]) -> None:
    """Each System V IPC object `wanted` uids own or created (its owner set to another uid with
    IPC_SET, 65534 say, it is still its creator's), removed as that uid: without CAP_SYS_ADMIN
    (the very profile this is for) root may not remove another user's; the owner and the
    creator may."""
    owned: dict[int, list[tuple[str, int]]] = {}
    for kind, uid_column, cuid_column in (("shm", 7, 9), ("msg", 7, 9), ("sem", 4, 6)):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                rows = [line.split() for line in table.readlines()[1:]]
        except OSError:
            continue
        for row in rows:
            try:
                by = next((int(row[c]) for c in (uid_column, cuid_column) if int(row[c]) in wanted), None)
                if by is not None:
                    owned.setdefault(by, []).append((kind, int(row[1])))
            except (ValueError, IndexError):
                continue
    for uid, objects in owned.items():
        _remove_as(uid, objects)


def _remove_as(uid: int, objects: list[tuple[str, int]]) -> None:
    import ctypes

    from grader.sandbox.asuid import as_uid

    def remove() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for kind, ident in objects:
            if kind == "sem":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                getattr(libc, f"{kind}ctl")(ident, IPC_RMID, None)

    as_uid(uid, remove)
