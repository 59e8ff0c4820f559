"""Reading a submission: bytes from a folder, never through a link, never more than a cap.

A submission is data. Whoever reads one (the Linux fence, the portable worker on Windows and
macOS, the judge's syntax scan, `grade batch`'s staging) reads it here, by one set of rules:

- only the folders something is read from are walked: the top level (what a worker imports),
  and for `grade batch` the folders its caller names (`descend`: `exercises/`, nbgrader's
  assignment folders). Anything else inside (a `.venv`, `.git`, data) is an `lstat` at most:
  never opened, never walked, never counted against a cap;
- a symbolic link is never followed: the folder itself or any folder on its path (on Windows a
  junction too) refuses the whole submission, and so does a link among the files read (a
  linked `ex01_windows.py`): `exercises -> /proc/self/cwd/solutions` or a link to the kit's
  `solutions/` never becomes the student's answer. A link that is not read (`data ->
  ../datasets`, `exercises -> …` beside top-level files) is left alone and recorded. (POSIX: a
  root-owned link directly under a root-owned `/`, macOS's `/var`, is the system's and taken as
  the folder it names.)
- a FIFO, socket or device among the files read refuses it too (a FIFO would block the
  reader); one that is not read is left alone, never opened;
- sizes are capped before reading: a file read over `max_file`, the files read together over
  `max_total` bytes, a walked folder's entries over `max_entries` (listing stops there), or a
  walk deeper than `max_depth`, refuses it with the number.

Two walkers, one set of rules: where the OS has `O_NOFOLLOW` and `dir_fd` (Linux, macOS),
file descriptors, `openat(O_NOFOLLOW)` at every step from `/` down; elsewhere (Windows) paths,
`os.lstat` / `os.scandir` never following, each file opened with `O_NOFOLLOW` where it exists
and it and every folder on its way checked with `lstat` before and after (a swap refuses).

`read_submission` returns the top level's `*.py` files (what a worker imports).
`survey(folder, descend=…, tolerate=…)` walks without reading, for callers that choose what to
read (`grade batch` refuses one exercise's file and still grades the others).

    read_submission("sub")   # {'ex01_windows.py': b'X = 1\\n'}; sub/data -> /etc is not read;
    # with sub/ex02_nll.py -> ../solutions/ex02_nll.py:
    # SubmissionRefused: submission refused: ex02_nll.py is a symbolic link (a submission holds …)
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

LIMITS = {"max_file": 4 * 1024 * 1024, "max_total": 32 * 1024 * 1024, "max_entries": 4000, "max_depth": 12}
_NAME_SURROGATE = 0x20000000  # a Windows reparse point that names another file: symlink, junction
_BLOCK = 1 << 20


class SubmissionRefused(Exception):
    """The submission folder holds something a submission may not (a link, a special file, too much).

    `reason` is a code (`link`, `special`, `not_a_folder`, `unreadable`, `changed`, `too_large`,
    `too_deep`, `too_many`, `over_total`), `parts` the entry's path inside the folder.
    """

    def __init__(self, zh: str, en: str, reason: str = "", parts: tuple[str, ...] = ()):
        super().__init__(en)
        self.zh, self.en, self.reason, self.parts = zh, en, reason, parts

    message = property(lambda self: f"{self.zh} / {self.en}")


def shown(name: str) -> str:
    """A file name as text: its odd bytes (not UTF-8) as \\xNN."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


_WHY = {  # reason -> (zh, en) after the entry's name
    "link": ("是符号链接（提交只能包含自己的文件，不能是链接）",
             "is a symbolic link (a submission holds its own files, not links)"),
    "not_a_folder": ("不是文件夹", "is not a folder"),
    "unreadable": ("打不开", "cannot be opened ({})"),
    "changed": ("在读取时被换掉了", "changed while it was being read"),
    "too_large": ("太大（{} 字节，上限 {}）", "is too large ({} bytes, the cap is {})"),
}


_FOLDER = "the folder"  # the submission as a whole, in a refusal's words (文件夹 in Chinese)


def _refuse(what: str, reason: str, *args, parts=(), zh: str = "", en: str = "") -> SubmissionRefused:
    """The refusal of entry `what` for `reason` (`_WHY`'s words, or `zh` / `en` given)."""
    zh_why, en_why = (zh, en) if zh else _WHY[reason]
    zh_what = "文件夹" if what == _FOLDER else what
    return SubmissionRefused(f"提交被拒绝：{zh_what} {zh_why.format(*args)}",
                             f"submission refused: {what} {en_why.format(*args)}", reason, tuple(parts))


def _special(what: str, mode: int, parts=()) -> SubmissionRefused:
    kind = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device", stat.S_IFBLK: "device"}.get(
        stat.S_IFMT(mode), "special file")
    return _refuse(what, "special", parts=parts, zh=f"是特殊文件（{kind}），不是普通文件",
                   en=f"is a {kind}, not a regular file")


def is_link(info: os.stat_result) -> bool:
    """A symbolic link, or (Windows) a reparse point naming another file (a junction)."""
    return stat.S_ISLNK(info.st_mode) or bool(getattr(info, "st_reparse_tag", 0) & _NAME_SURROGATE)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    """The same file (device and inode where the OS gives them), of the same kind."""
    if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode):
        return False
    return not (a.st_ino and b.st_ino) or (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)


def _system_path(path: str) -> str:
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


def _first(listing, limit: int) -> list[str]:
    """The names of at most `limit` entries of a listing: a folder of a million entries is not
    read whole into memory (past the cap the walk refuses anyway)."""
    names = []
    for entry in listing:
        if len(names) >= limit:
            break
        names.append(entry.name)
    return names


def _open_read(path: str, what: str, cap: int, parts, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes, at most `cap` (checked on the open file and while reading), the
    file opened with `O_NOFOLLOW` where the OS has it, never blocking (a FIFO swapped in)."""
    flags = os.O_RDONLY
    for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_BINARY", "O_NOINHERIT"):
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd) if dir_fd is not None else os.open(path, flags)
    except OSError as err:
        raise _refuse(what, "link" if err.errno == errno.ELOOP else "unreadable", err.strerror, parts=parts) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _special(what, info.st_mode, parts)
        if info.st_size > cap:
            raise _refuse(what, "too_large", info.st_size, cap, parts=parts)
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, _BLOCK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if os.read(fd, 1):  # grew while being read: still capped
            raise _refuse(what, "too_large", cap + 1, cap, parts=parts)
        return b"".join(chunks), info
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the two walkers


class _FdWalk:
    """POSIX: every folder an fd reached by `openat(O_NOFOLLOW)` from `/`; entries by `dir_fd`."""

    @staticmethod
    def available() -> bool:
        return (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
                and os.stat in os.supports_dir_fd and os.scandir in os.supports_fd)

    def root(self, folder: str) -> int:
        """An fd on `folder`, reached from `/` one component at a time, no link followed anywhere."""
        path = _system_path(os.path.abspath(folder))  # made absolute lexically (no `..` through a link)
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
                    raise _refuse(what, "unreadable", err.strerror, parts=parts) from None
                if stat.S_ISLNK(mode):
                    raise _refuse(what, "link", parts=parts) from None
                raise _refuse(what, "not_a_folder", parts=parts) from None
            raise _refuse(what, "unreadable", err.strerror, parts=parts) from None

    def entries(self, handle: int, what: str, parts, limit: int) -> list[tuple[str, os.stat_result]]:
        with os.scandir(handle) as listing:
            names = sorted(_first(listing, limit))
        return [(name, os.lstat(name, dir_fd=handle)) for name in names]

    def sub(self, handle: int, name: str, info: os.stat_result, what: str, parts) -> int:
        fd = self._open_dir(name, handle, what, parts)
        if not _same(os.fstat(fd), info):
            os.close(fd)
            raise _refuse(what, "changed", parts=parts)
        return fd

    def read(self, handle: int, name: str, what: str, cap: int, parts) -> tuple[bytes, os.stat_result]:
        return _open_read(name, what, cap, parts, dir_fd=handle)

    def close(self, handle: int) -> None:
        os.close(handle)


@dataclass
class _Place:
    path: str  # a folder reached by path; `chain`: each folder on its way from `/`, as first seen
    chain: tuple[tuple[str, os.stat_result], ...]


class _PathWalk:
    """Portable: paths, `os.lstat` / `os.scandir` never following, checks before and after."""

    def root(self, folder: str) -> _Place:
        path = _system_path(os.path.abspath(folder))
        drive, rest = os.path.splitdrive(path)
        current = drive + os.sep
        chain = []
        for part in [p for p in rest.replace("/", os.sep).split(os.sep) if p]:
            current = os.path.join(current, part)
            info = self._lstat(current, current, ())
            if is_link(info):
                raise _refuse(current, "link")
            if not stat.S_ISDIR(info.st_mode):
                raise _refuse(current, "not_a_folder")
            chain.append((current, info))
        if not chain:  # a drive's root, or `/` itself
            chain.append((current, self._lstat(current, current, ())))
        return _Place(current, tuple(chain))

    @staticmethod
    def _lstat(path: str, what: str, parts) -> os.stat_result:
        try:
            return os.lstat(path)
        except OSError as err:
            raise _refuse(what, "unreadable", err.strerror, parts=parts) from None

    def _verify(self, place: _Place, what: str, parts) -> None:
        """Every folder from the root down is still the one first seen, and still no link."""
        for path, seen in place.chain:
            now = self._lstat(path, what, parts)
            if is_link(now) or not _same(now, seen):
                raise _refuse(what, "changed", parts=parts)

    def entries(self, handle: _Place, what: str, parts, limit: int) -> list[tuple[str, os.stat_result]]:
        self._verify(handle, what, parts)
        try:
            with os.scandir(handle.path) as listing:
                names = sorted(_first(listing, limit))
        except OSError as err:
            raise _refuse(what, "unreadable", err.strerror, parts=parts) from None
        found = [(name, self._lstat(os.path.join(handle.path, name), what, parts)) for name in names]
        self._verify(handle, what, parts)
        return found

    def sub(self, handle: _Place, name: str, info: os.stat_result, what: str, parts) -> _Place:
        path = os.path.join(handle.path, name)
        return _Place(path, handle.chain + ((path, info),))

    def read(self, handle: _Place, name: str, what: str, cap: int, parts) -> tuple[bytes, os.stat_result]:
        path = os.path.join(handle.path, name)
        before = self._lstat(path, what, parts)
        if is_link(before):
            raise _refuse(what, "link", parts=parts)
        if not stat.S_ISREG(before.st_mode):
            raise _special(what, before.st_mode, parts)
        if before.st_size > cap:  # never opened
            raise _refuse(what, "too_large", before.st_size, cap, parts=parts)
        self._verify(handle, what, parts)
        data, opened = _open_read(path, what, cap, parts)
        after = self._lstat(path, what, parts)
        if is_link(after) or not _same(before, opened) or not _same(before, after):
            raise _refuse(what, "changed", parts=parts)
        self._verify(handle, what, parts)
        return data, opened

    def close(self, handle: _Place) -> None:
        pass


def _walker(portable: bool | None = None):
    """The fd walker where the OS has `O_NOFOLLOW` and `dir_fd`, else the path walker."""
    if portable is None:
        portable = not _FdWalk.available()
    return _PathWalk() if portable else _FdWalk()


# --------------------------------------------------------------------------- the survey


@dataclass
class Survey:
    """What a submission folder holds, looked at without reading a byte.

    `entries`: every regular file and real folder, by its path inside the folder (a tuple of
    names) -> its `lstat`; `problems`: the refusals `tolerate` let through (each with `parts`).
    """

    folder: str
    entries: dict[tuple[str, ...], os.stat_result] = field(default_factory=dict)
    problems: list[SubmissionRefused] = field(default_factory=list)
    portable: bool | None = None

    def files(self, parent: tuple[str, ...] = ()) -> dict[str, os.stat_result]:
        """The regular files directly in folder `parent` (a path inside the submission)."""
        return {p[-1]: s for p, s in self.entries.items() if p[:-1] == parent and stat.S_ISREG(s.st_mode)}

    def read(self, wanted, cap: int) -> dict[tuple[str, ...], bytes | SubmissionRefused]:
        """Read the files `wanted` (paths from `entries`), each at most `cap`, without following
        a link; each is checked to be the file the survey saw. A file that cannot be read so
        gives its refusal instead of bytes."""
        walk = _walker(self.portable)
        out: dict[tuple[str, ...], bytes | SubmissionRefused] = {}
        root = walk.root(self.folder)
        opened = {(): root}
        try:
            for parts in sorted(wanted):
                what = "/".join(shown(p) for p in parts)
                try:
                    handle = self._folder(walk, opened, parts[:-1])
                    data, info = walk.read(handle, parts[-1], what, cap, parts)
                    if parts in self.entries and not _same(info, self.entries[parts]):
                        raise _refuse(what, "changed", parts=parts)
                    out[parts] = data
                except SubmissionRefused as err:
                    out[parts] = err
        finally:
            for handle in opened.values():
                walk.close(handle)
        return out

    def _folder(self, walk, opened: dict, parts: tuple[str, ...]):
        if parts not in opened:
            parent = self._folder(walk, opened, parts[:-1])
            what = "/".join(shown(p) for p in parts)
            info = self.entries.get(parts)
            if info is None or not stat.S_ISDIR(info.st_mode):
                raise _refuse(what, "changed", parts=parts)
            opened[parts] = walk.sub(parent, parts[-1], info, what, parts)
        return opened[parts]


Tolerate = Callable[[tuple[str, ...], SubmissionRefused], bool]
Descend = Callable[[tuple[str, ...]], bool]


def survey(folder: str, limits: dict | None = None, *, descend: Descend | None = None,
           tolerate: Tolerate | None = None, portable: bool | None = None) -> Survey:
    """Walk `folder` by the rules above, reading nothing; `SubmissionRefused` for what is unsafe.

    Only the top level is listed, and the sub-folders `descend(parts)` says True for (None:
    none); the others are recorded as folders and never opened. A link or special file for
    which `tolerate(parts, refusal)` says True is recorded in `problems` instead (and not looked
    into). `portable` forces a walker (None: the OS's best).

        survey("sub", descend=lambda parts: parts == ("exercises",)).entries
        # {('exercises',): …, ('exercises', 'ex01_windows.py'): …, ('.venv',): …}  .venv not walked
    """
    caps = {**LIMITS, **(limits or {})}
    walk = _walker(portable)
    found = Survey(os.path.abspath(folder), portable=portable)
    root = walk.root(folder)
    try:
        _walk(walk, root, (), caps, {"entries": 0}, descend or _nowhere, tolerate, found)
    finally:
        walk.close(root)
    return found


def _nowhere(_parts: tuple[str, ...]) -> bool:
    return False


def _walk(walk, handle, parts: tuple[str, ...], caps: dict, state: dict, descend: Descend, tolerate,
          found: Survey) -> None:
    here = "/".join(shown(p) for p in parts) or "."
    if len(parts) > caps["max_depth"]:
        raise _refuse(here, "too_deep", parts=parts, zh=f"嵌套太深（超过 {caps['max_depth']} 层）",
                      en=f"is nested too deeply (over {caps['max_depth']} levels)")
    for name, info in walk.entries(handle, here, parts, caps["max_entries"] - state["entries"] + 1):
        rel = parts + (name,)
        what = "/".join(shown(p) for p in rel)
        state["entries"] += 1
        if state["entries"] > caps["max_entries"]:
            raise _refuse(_FOLDER, "too_many", parts=rel, zh=f"文件太多（超过 {caps['max_entries']} 个）",
                          en=f"holds too many entries (over {caps['max_entries']})")
        if is_link(info):
            problem = _refuse(what, "link", parts=rel)
        elif stat.S_ISDIR(info.st_mode):
            found.entries[rel] = info
            if descend(rel):
                sub = walk.sub(handle, name, info, what, rel)
                try:
                    _walk(walk, sub, rel, caps, state, descend, tolerate, found)
                finally:
                    walk.close(sub)
            continue
        elif not stat.S_ISREG(info.st_mode):
            problem = _special(what, info.st_mode, rel)
        else:
            found.entries[rel] = info
            continue
        if tolerate is None or not tolerate(rel, problem):
            raise problem
        found.problems.append(problem)


# --------------------------------------------------------------------------- what workers import


def read_submission(folder: str, limits: dict | None = None, *, portable: bool | None = None) -> dict[str, bytes]:
    """The submission's top-level `*.py` files as bytes; `SubmissionRefused` for anything unsafe.

    A top-level `*.py` that is a link or a special file refuses the submission, and so does one
    over `max_file`, or all of them together over `max_total` (checked before a byte is read).
    Other links and special files are not read, and sub-folders not walked.
    """
    caps = {**LIMITS, **(limits or {})}
    found = survey(folder, caps, tolerate=_not_imported, portable=portable)
    wanted = [(name,) for name in found.files() if name.endswith(".py")]
    total = 0
    for parts in wanted:
        size = found.entries[parts].st_size
        if size > caps["max_file"]:
            raise _refuse(shown(parts[0]), "too_large", size, caps["max_file"], parts=parts)
        total += size
        if total > caps["max_total"]:
            raise _refuse(_FOLDER, "over_total", parts=parts, zh=f"太大（超过 {caps['max_total']} 字节）",
                          en=f"is too large (over {caps['max_total']} bytes)")
    files = {}
    for parts, data in found.read(wanted, caps["max_file"]).items():
        if isinstance(data, SubmissionRefused):
            raise data
        files[parts[0]] = data
    return files


def _not_imported(parts: tuple[str, ...], _err: SubmissionRefused) -> bool:
    """A link or special file a worker would not import (not a `*.py`): left alone, not read."""
    return not parts[-1].endswith(".py")


def copy_submission(folder: str, target: str, limits: dict | None = None, *,
                    portable: bool | None = None) -> str | None:
    """The submission's files read by these rules and written into a new folder `target` (the
    worker's private copy, the only one it imports); the refusal's message, or None.

    A refused submission leaves `target` empty. The copies are read-only where that does not
    stop their clean-up (POSIX; on Windows a read-only file would outlive the scratch folder).
    """
    try:
        files = read_submission(folder, limits, portable=portable)
    except SubmissionRefused as err:
        files, refusal = {}, err.message
    else:
        refusal = None
    os.mkdir(target, 0o755)
    for name, data in files.items():
        path = os.path.join(target, name)
        with open(path, "wb") as handle:
            handle.write(data)
        if os.name == "posix":
            os.chmod(path, 0o444)
    return refusal


__all__ = ["read_submission", "copy_submission", "survey", "Survey", "SubmissionRefused", "LIMITS",
           "is_link", "shown"]
