"""The two ways of walking a submission folder without following a link (`grader.sandbox.intake`).

Where the OS has `O_NOFOLLOW` and `dir_fd` (Linux, macOS), `FdWalk`: file descriptors,
`openat(O_NOFOLLOW)` at every step from `/` down. Elsewhere (Windows), `PathWalk`: paths,
`os.lstat` / `os.scandir` never following, each file opened with `O_NOFOLLOW` where it exists
and it and every folder on its way checked with `lstat` before and after (a swap refuses).
Both list at most the entries they are allowed (`limit`) and read at most a cap.

    walk = walker()                       # FdWalk here, PathWalk on Windows
    root = walk.root("sub")               # refused if `sub` or a folder on its path is a link
    walk.entries(root, ".", (), 4001)     # [('ex01_windows.py', os.stat_result(...)), ...]
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from grader.sandbox.refusals import refuse, special

_NAME_SURROGATE = 0x20000000  # a Windows reparse point that names another file: symlink, junction
_BLOCK = 1 << 20


def is_link(info: os.stat_result) -> bool:
    """A symbolic link, or (Windows) a reparse point naming another file (a junction)."""
    return stat.S_ISLNK(info.st_mode) or bool(getattr(info, "st_reparse_tag", 0) & _NAME_SURROGATE)


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """The same file (device and inode where the OS gives them), of the same kind."""
    if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode):
        return False
    return not (a.st_ino and b.st_ino) or (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)


def system_path(path: str) -> str:
    """`path` with a first component that is a root-owned link under a root-owned `/` (macOS's
    `/var`, `/tmp`) taken as the folder it names; nothing else changes. POSIX only."""
    if os.name != "posix":
        return path
    parts = [p for p in path.split(os.sep) if p]
    if not parts:
        return path
    try:
        top, first = os.lstat("/"), os.lstat(os.sep + parts[0])
    except OSError:
        return path
    if stat.S_ISLNK(first.st_mode) and first.st_uid == 0 and top.st_uid == 0 and not top.st_mode & 0o022:
        return os.path.join(os.path.realpath(os.sep + parts[0]), *parts[1:])
    return path


def first_names(listing, limit: int) -> list[str]:
    """The names of at most `limit` entries of a listing: a folder of a million entries is not
    read whole into memory (past the cap the walk refuses anyway)."""
    names = []
    for entry in listing:
        if len(names) >= limit:
            break
        names.append(entry.name)
    return names


def open_read(path: str, what: str, cap: int, parts, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes, at most `cap` (checked on the open file and while reading), the
    file opened with `O_NOFOLLOW` where the OS has it, never blocking (a FIFO swapped in)."""
    flags = os.O_RDONLY
    for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_BINARY", "O_NOINHERIT"):
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd) if dir_fd is not None else os.open(path, flags)
    except OSError as err:
        raise refuse(what, "link" if err.errno == errno.ELOOP else "unreadable", err.strerror, parts=parts) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise special(what, info.st_mode, parts)
        if info.st_size > cap:
            raise refuse(what, "too_large", info.st_size, cap, parts=parts)
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, _BLOCK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if os.read(fd, 1):  # grew while being read: still capped
            raise refuse(what, "too_large", cap + 1, cap, parts=parts)
        return b"".join(chunks), info
    finally:
        os.close(fd)


class FdWalk:
    """POSIX: every folder an fd reached by `openat(O_NOFOLLOW)` from `/`; entries by `dir_fd`."""

    @staticmethod
    def available() -> bool:
        return (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
                and os.stat in os.supports_dir_fd and os.scandir in os.supports_fd)

    def root(self, folder: str) -> int:
        """An fd on `folder`, reached from `/` one component at a time, no link followed anywhere."""
        path = system_path(os.path.abspath(folder))  # made absolute lexically (no `..` through a link)
        fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        walked = ""
        try:
            for part in [p for p in path.split(os.sep) if p]:
                walked += os.sep + part
                nxt = self._open_dir(part, fd, walked, ())
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_dir(self, name: str, dir_fd: int, what: str, parts) -> int:
        try:
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR):
                try:
                    mode = os.lstat(name, dir_fd=dir_fd).st_mode
                except OSError:
                    raise refuse(what, "unreadable", err.strerror, parts=parts) from None
                if stat.S_ISLNK(mode):
                    raise refuse(what, "link", parts=parts) from None
                raise refuse(what, "not_a_folder", parts=parts) from None
            raise refuse(what, "unreadable", err.strerror, parts=parts) from None

    def entries(self, handle: int, what: str, parts, limit: int) -> list[tuple[str, os.stat_result]]:
        try:  # a folder readable but not searchable (mode 644, as an ordinary user): its lstat fails
            with os.scandir(handle) as listing:
                names = sorted(first_names(listing, limit))
            return [(name, info) for name in names if (info := _still_there(name, handle)) is not None]
        except OSError as err:
            raise refuse(what, "unreadable", err.strerror, parts=parts) from None

    def sub(self, handle: int, name: str, info: os.stat_result, what: str, parts) -> int:
        fd = self._open_dir(name, handle, what, parts)
        if not same_file(os.fstat(fd), info):
            os.close(fd)
            raise refuse(what, "changed", parts=parts)
        return fd

    def read(self, handle: int, name: str, what: str, cap: int, parts) -> tuple[bytes, os.stat_result]:
        return open_read(name, what, cap, parts, dir_fd=handle)

    def close(self, handle: int) -> None:
        os.close(handle)


@dataclass
class _Place:
    path: str  # a folder reached by path; `chain`: each folder on its way from `/`, as first seen
    chain: tuple[tuple[str, os.stat_result], ...]


class PathWalk:
    """Portable: paths, `os.lstat` / `os.scandir` never following, checks before and after."""

    def root(self, folder: str) -> _Place:
        path = system_path(os.path.abspath(folder))
        drive, rest = os.path.splitdrive(path)
        current = drive + os.sep
        chain = []
        for part in [p for p in rest.replace("/", os.sep).split(os.sep) if p]:
            current = os.path.join(current, part)
            info = self._lstat(current, current, ())
            if is_link(info):
                raise refuse(current, "link")
            if not stat.S_ISDIR(info.st_mode):
                raise refuse(current, "not_a_folder")
            chain.append((current, info))
        if not chain:  # a drive's root, or `/` itself
            chain.append((current, self._lstat(current, current, ())))
        return _Place(current, tuple(chain))

    @staticmethod
    def _lstat(path: str, what: str, parts) -> os.stat_result:
        try:
            return os.lstat(path)
        except OSError as err:
            raise refuse(what, "unreadable", err.strerror, parts=parts) from None

    def _verify(self, place: _Place, what: str, parts) -> None:
        """Every folder from the root down is still the one first seen, and still no link."""
        for path, seen in place.chain:
            now = self._lstat(path, what, parts)
            if is_link(now) or not same_file(now, seen):
                raise refuse(what, "changed", parts=parts)

    def entries(self, handle: _Place, what: str, parts, limit: int) -> list[tuple[str, os.stat_result]]:
        self._verify(handle, what, parts)
        try:
            with os.scandir(handle.path) as listing:
                names = sorted(first_names(listing, limit))
        except OSError as err:
            raise refuse(what, "unreadable", err.strerror, parts=parts) from None
        found = []
        for name in names:
            try:
                info = _still_there(os.path.join(handle.path, name))
            except OSError as err:
                raise refuse(what, "unreadable", err.strerror, parts=parts) from None
            if info is not None:
                found.append((name, info))
        self._verify(handle, what, parts)
        return found

    def sub(self, handle: _Place, name: str, info: os.stat_result, what: str, parts) -> _Place:
        path = os.path.join(handle.path, name)
        return _Place(path, handle.chain + ((path, info),))

    def read(self, handle: _Place, name: str, what: str, cap: int, parts) -> tuple[bytes, os.stat_result]:
        path = os.path.join(handle.path, name)
        before = self._lstat(path, what, parts)
        if is_link(before):
            raise refuse(what, "link", parts=parts)
        if not stat.S_ISREG(before.st_mode):
            raise special(what, before.st_mode, parts)
        if before.st_size > cap:  # never opened
            raise refuse(what, "too_large", before.st_size, cap, parts=parts)
        self._verify(handle, what, parts)
        data, opened = open_read(path, what, cap, parts)
        after = self._lstat(path, what, parts)
        if is_link(after) or not same_file(before, opened) or not same_file(before, after):
            raise refuse(what, "changed", parts=parts)
        self._verify(handle, what, parts)
        return data, opened

    def close(self, handle: _Place) -> None:
        pass


def _still_there(name: str, dir_fd: int | None = None) -> os.stat_result | None:
    """`lstat` of a listed entry; None when it is gone since the listing (an editor's swap or
    backup file saved over, `4913`, `.x.swp`, `x~`): not there is not a reason to refuse."""
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def walker(portable: bool | None = None):
    """The fd walker where the OS has `O_NOFOLLOW` and `dir_fd`, else the path walker."""
    if portable is None:
        portable = not FdWalk.available()
    return PathWalk() if portable else FdWalk()
