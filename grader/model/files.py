"""Files written and read the careful way: one atomic write, one streaming digest.

`atomic_write` never leaves a half-written file under the final name (kill -9 included):
it writes a temporary file beside it, fsyncs, then renames. `digest_files` streams each file
in blocks, so a huge file costs time, never memory.

    >>> atomic_write(Path("out/grades.csv"), "student,total\\n")
    >>> digest_files([Path("a.py"), Path("b.py")], extra="v1")   # 'sha256 hex…'
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

BLOCK = 1 << 20


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write `data` (text as UTF-8) to `path` atomically; `mode` sets its permission bits."""
    path = Path(path)
    tmp = _written_beside(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_together(files: list[tuple[Path, str | bytes]]) -> None:
    """Write files that belong together (a gradebook's results.json and grades.csv): every one
    whole on disk first (a disk that fills changes none of them), then the last one's old
    version removed, then each put in place. Killed in between, the last file is missing
    rather than older than the others: never one generation's beside another's.

        write_together([(Path("out/results.json"), "{}"), (Path("out/grades.csv"), "student\n")])
    """
    written: list[Path] = []
    try:
        for path, data in files:
            written.append(_written_beside(Path(path), data, None))
        Path(files[-1][0]).unlink(missing_ok=True)
        for (path, _), tmp in zip(files, written):
            os.replace(tmp, path)
    except BaseException:
        for tmp in written:
            tmp.unlink(missing_ok=True)
        raise


def _written_beside(path: Path, data: str | bytes, mode: int | None) -> Path:
    """`data` in a temporary file beside `path`, fsynced: its name, to be renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    blob = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as handle:
            handle.write(blob)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def digest_files(paths, extra: str = "", *, cap: int | None = None) -> str:
    """sha256 over each file's name and bytes, streamed; a missing file counts as missing.

    With `cap`, a file larger than `cap` bytes is digested by its size alone (it will be
    refused anyway), so the digest never reads more than `cap` bytes of any file.
    """
    digest = hashlib.sha256(extra.encode())
    for path in paths:
        path = Path(path)
        digest.update(path.name.encode() + b"\0")
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if cap is not None and size > cap:
                    digest.update(f"<over cap: {size}>".encode())
                else:
                    for block in iter(lambda: handle.read(BLOCK), b""):
                        digest.update(block)
        except OSError:
            digest.update(b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def readable_by_others(path, below=None) -> bool:
    """Whether a user who is neither the owner nor in the group can read `path`: its own mode,
    and search permission on every folder above it, up to and including `below` when given
    (the folders above that are someone else's to open), else up to `/`.

    >>> readable_by_others("/etc/hostname"), readable_by_others("/root/.bashrc")
    (True, False)
    """
    path = Path(path)
    try:
        if not path.stat().st_mode & stat.S_IROTH:
            return False
        for folder in path.parents:  # the nearest first
            if folder == folder.parent:
                break  # `/` itself
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
            if below is not None and folder == Path(below):
                break
    except OSError:
        return False
    return True


def read_capped(path: str, cap: int) -> bytes | None:
    """A regular file a student controls, read: never through a link, never blocking, at most
    `cap` bytes (None when it is not a regular file or is larger).

        read_capped("cohort/ann/ex01_windows.py", 1 << 20)   # b"def shift_pairs…" or None

    Opened without following a link and without blocking (a file swapped for a FIFO after
    the lstat), checked again on the open file, read in blocks.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        chunks, total = [], 0
        while total <= cap:
            block = os.read(fd, min(BLOCK, cap + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
        return None if total > cap else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
