"""Which folders of a cohort are `grade batch`'s own OUTs: a seal no submission can make.

A batch's OUT (or a merged gradebook's) may lie inside the cohort's folder DIR (`grade batch
DIR --out DIR/out_1 --shard 1/2`): a later batch of that cohort must not take it for a
student. But a student's folder can hold the same files (`cohort.json` naming DIR, the lock
file) and no exercise file: it would then get no row at all. So OUT's cohort file also holds
a seal, an HMAC of the cohort and of OUT's own resolved path under a key of the user's that
no submission can read, and a folder of DIR is skipped as another OUT only when its seal holds
(`grader.cohort.batch`). A student's folder dressed as one is graded, and keeps its row.

The key is 32 random bytes in `<cache>/keys/out-seal` (`$XDG_CACHE_HOME/gpt-course` or
`~/.cache/gpt-course`, the folder 0700, the file 0600), made on first use. The fence hides
`<cache>/keys/` from every worker (`grader.data.catalog.PRIVATE_FOLDERS`), and as root a worker's
uid cannot read it anyway. An OUT moved, copied, or written by another user (another key) is
not taken for one: it gets a row, as a folder holding no exercise file. Where the key cannot
be made or read (a cache folder another user owns), or the key there is not the user's alone
(another owner, a mode others can read, a folder others can write, not a regular file), the
batch says so and writes OUT unsealed.

    >>> seal = out_seal(Path("/srv/cohort/out_1"), "/srv/cohort")   # 64 hex digits
    >>> holds_seal(Path("/srv/cohort/out_1"), "/srv/cohort", seal)
    True
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from grader.cohort.capped import read_capped

KEY_FOLDER = "keys"  # inside the data cache: one of its PRIVATE_FOLDERS, hidden from workers by the fence
KEY_NAME = "out-seal"
KEY_BYTES = 32


def key_folder() -> Path:
    from grader.data.catalog import default_cache_dir

    return default_cache_dir() / KEY_FOLDER


def _key() -> bytes:
    """The user's seal key, made on first use (two batches at once: one key, the first written).
    OSError when it cannot be made, or the one there is not the user's alone (`_read_key`)."""
    folder = key_folder()
    path = folder / KEY_NAME
    key = _read_key(path)
    if key is not None:
        return key
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    _check_folder(folder)
    draft = folder / f".{KEY_NAME}.{os.getpid()}.tmp"
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            if os.write(fd, secrets.token_bytes(KEY_BYTES)) != KEY_BYTES:
                raise OSError(f"{draft}: short write")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(draft, path)  # never over a key another batch made a moment ago
        except FileExistsError:
            pass
    finally:
        draft.unlink(missing_ok=True)
    key = _read_key(path)
    if key is None:
        raise OSError(f"{path}: not a key of {KEY_BYTES} bytes")
    return key


def _check_folder(folder: Path) -> None:
    """The key's folder is the user's alone: a folder others can write could hold their key."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise OSError(f"{folder}: not a folder of this user's alone")


def _read_key(path: Path) -> bytes | None:
    """The key, or None when there is none yet. OSError for one that is not a regular file of
    this user's, mode 0600 or stricter, in a folder of the user's alone (a key another user
    planted, a FIFO that would block): such a key seals nothing."""
    if not os.path.lexists(path):
        return None
    _check_folder(path.parent)  # no one else can put or swap a file here: what lstat sees is what is read
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise OSError(f"{path}: not a key of this user's alone")
    key = read_capped(str(path), KEY_BYTES)  # never through a link, never blocking
    return key if key is not None and len(key) == KEY_BYTES else None


def _message(out: Path, cohort: str) -> bytes:
    return b"grade-batch-out\0" + os.fsencode(str(Path(out).resolve())) + b"\0" + cohort.encode("utf-8", "surrogatepass")


def out_seal(out: Path, cohort: str) -> str:
    """The seal OUT's cohort file holds: OUT's resolved path and the cohort, under the user's key."""
    return hmac.new(_key(), _message(out, cohort), hashlib.sha256).hexdigest()


def holds_seal(out: Path, cohort: str, seal: object) -> bool:
    """Whether `seal` (read from OUT's cohort file: the student's, perhaps) is OUT's, for `cohort`.
    No key yet: no batch of this user has sealed anything, so nothing holds."""
    if not isinstance(seal, str):
        return False
    try:
        key = _read_key(key_folder() / KEY_NAME)
    except OSError:
        return False
    if key is None:
        return False
    return hmac.compare_digest(hmac.new(key, _message(out, cohort), hashlib.sha256).hexdigest(), seal)


__all__ = ["out_seal", "holds_seal", "key_folder"]
