"""Reading a file a student controls: never a link, never blocking, never more than a cap.

    >>> read_capped("cohort/ann/ex01_windows.py", SOURCE_CAP)   # b"def shift_pairs…" or None
"""

from __future__ import annotations

import os
import stat

from grader.model.files import BLOCK
from grader.sandbox.intake import LIMITS

SOURCE_CAP = LIMITS["max_file"]  # bytes of one .py file: the same cap as a single run's (grader.sandbox.intake)
TOTAL_CAP = LIMITS["max_total"]  # bytes of all .py files of one student
NOTEBOOK_CAP = 32 * 1024 * 1024  # bytes of one nbgrader notebook


def read_capped(path: str, cap: int) -> bytes | None:
    """A regular file's bytes, at most `cap` (None when it is not one or is larger).

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
