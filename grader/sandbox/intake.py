"""Reading a submission: bytes from a folder, never through a link, never more than a cap.

A submission is data. `read_submission(folder)` walks the folder with file descriptors
(`openat` with `O_NOFOLLOW` at every step, from `/` down), so that what it returns is what is
stored *in* the folder and nothing else:

- a symbolic link anywhere (the folder itself, any folder on its path, any entry at any
  depth) refuses the whole submission: `exercises -> /proc/self/cwd/solutions` or a link to
  the kit's `solutions/` must never become the student's answer, read as root;
- a FIFO, socket or device refuses it too (a FIFO would block the reader, a device is not a
  file a student hands in);
- sizes are capped before reading: a file over `max_file`, a tree over `max_total` bytes or
  `max_entries` entries, or deeper than `max_depth`, refuses it with the number.

What is read: the top level's `*.py` files (what a worker imports). Everything else is only
looked at (its kind and size), so a stray data file costs nothing.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "ex01_windows.py"), "w").write("X = 1\\n")
>>> read_submission(d)
{'ex01_windows.py': b'X = 1\\n'}
>>> os.symlink("/etc", os.path.join(d, "data"))
>>> try:
...     read_submission(d)
... except SubmissionRefused as err:
...     print(err.en)
submission refused: data is a symbolic link (a submission holds its own files, not links)
"""

from __future__ import annotations

import errno
import os
import stat

LIMITS = {"max_file": 4 * 1024 * 1024, "max_total": 32 * 1024 * 1024, "max_entries": 4000, "max_depth": 12}


class SubmissionRefused(Exception):
    """The submission folder holds something a submission may not (a link, a special file, too much)."""

    def __init__(self, zh: str, en: str):
        super().__init__(en)
        self.zh, self.en = zh, en

    @property
    def message(self) -> str:
        return f"{self.zh} / {self.en}"


def _refuse(what: str, zh_reason: str, en_reason: str) -> SubmissionRefused:
    return SubmissionRefused(f"提交被拒绝：{what} {zh_reason}", f"submission refused: {what} {en_reason}")


def _link(what: str) -> SubmissionRefused:
    return _refuse(what, "是符号链接（提交只能包含自己的文件，不能是链接）",
                   "is a symbolic link (a submission holds its own files, not links)")


def _special(what: str, mode: int) -> SubmissionRefused:
    kind = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device", stat.S_IFBLK: "device"}.get(
        stat.S_IFMT(mode), "special file")
    return _refuse(what, f"是特殊文件（{kind}），不是普通文件", f"is a {kind}, not a regular file")


def _open_dir(name: str, dir_fd: int | None, what: str) -> int:
    """Open folder `name` (relative to `dir_fd`) without following a link."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                mode = os.lstat(name, dir_fd=dir_fd).st_mode
            except OSError:
                raise _refuse(what, "打不开", f"cannot be opened ({err.strerror})") from None
            if stat.S_ISLNK(mode):
                raise _link(what) from None
            raise _refuse(what, "不是文件夹", "is not a folder") from None
        raise _refuse(what, "打不开", f"cannot be opened ({err.strerror})") from None


def open_folder(folder: str) -> int:
    """An fd on `folder`, reached from `/` one component at a time, no link followed anywhere.

    The path is made absolute lexically (no `..` resolved through a link).
    """
    path = os.path.abspath(folder)
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    walked = ""
    try:
        for part in [p for p in path.split(os.sep) if p]:
            walked += os.sep + part
            nxt = _open_dir(part, fd, walked)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_file(name: str, dir_fd: int, what: str, cap: int) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise _link(what) from None
        raise _refuse(what, "打不开", f"cannot be opened ({err.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _special(what, st.st_mode)
        if st.st_size > cap:
            raise _too_big(what, st.st_size, cap)
        chunks, left = [], st.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if os.read(fd, 1):  # grew while being read: still capped
            raise _too_big(what, cap + 1, cap)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_big(what: str, size: int, cap: int) -> SubmissionRefused:
    return _refuse(what, f"太大（{size} 字节，上限 {cap}）", f"is too large ({size} bytes, the cap is {cap})")


def read_submission(folder: str, limits: dict | None = None) -> dict[str, bytes]:
    """The submission's top-level `*.py` files as bytes; `SubmissionRefused` for anything unsafe.

    `folder` itself and every folder on its path must be real folders, not links; every entry
    below it, at any depth, a regular file or a real folder.
    """
    caps = {**LIMITS, **(limits or {})}
    root = open_folder(folder)
    files: dict[str, bytes] = {}
    state = {"entries": 0, "total": 0}
    try:
        _walk(root, "", 0, caps, state, files)
    finally:
        os.close(root)
    return files


def _walk(dir_fd: int, prefix: str, depth: int, caps: dict, state: dict, files: dict) -> None:
    if depth > caps["max_depth"]:
        raise _refuse(prefix.rstrip("/") or ".", f"嵌套太深（超过 {caps['max_depth']} 层）",
                      f"is nested too deeply (over {caps['max_depth']} levels)")
    with os.scandir(dir_fd) as entries:
        listed = sorted((e.name, e) for e in entries)
    for name, entry in listed:
        what = prefix + name
        state["entries"] += 1
        if state["entries"] > caps["max_entries"]:
            raise _refuse("the folder", f"文件太多（超过 {caps['max_entries']} 个）",
                          f"holds too many entries (over {caps['max_entries']})")
        st = os.lstat(name, dir_fd=dir_fd)
        if stat.S_ISLNK(st.st_mode):
            raise _link(what)
        if stat.S_ISDIR(st.st_mode):
            sub = _open_dir(name, dir_fd, what)
            try:
                _walk(sub, what + "/", depth + 1, caps, state, files)
            finally:
                os.close(sub)
            continue
        if not stat.S_ISREG(st.st_mode):
            raise _special(what, st.st_mode)
        state["total"] += st.st_size
        if st.st_size > caps["max_file"] and depth == 0 and name.endswith(".py"):
            raise _too_big(what, st.st_size, caps["max_file"])
        if state["total"] > caps["max_total"]:
            raise _refuse("the folder", f"太大（超过 {caps['max_total']} 字节）",
                          f"is too large (over {caps['max_total']} bytes)")
        if depth == 0 and name.endswith(".py"):
            files[name] = _read_file(name, dir_fd, what, caps["max_file"])


def check_folder(folder: str, limits: dict | None = None) -> SubmissionRefused | None:
    """The refusal `read_submission` would raise, or None (for the judge, before grading)."""
    try:
        read_submission(folder, limits)
    except SubmissionRefused as err:
        return err
    return None


__all__ = ["read_submission", "check_folder", "open_folder", "SubmissionRefused", "LIMITS"]
