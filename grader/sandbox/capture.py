"""What a worker's student code prints: the first `OUTPUT_CAP` characters kept, the rest counted.

`sys.stdout` and `sys.stderr` become one `Printed` stream: a print flood costs memory for the
first characters only, and never fills a file until the kit's file-size limit turns the
student's next `print` into `OSError: [Errno 27] File too large` (what a capture file did).
Output written below Python (a C extension, `os.write(1, …)`) still goes to fds 1 and 2,
which point at a capture file read back after each call.

Example: `for i in range(10**6): print(i)` keeps "0\\n1\\n…" up to 4,000 characters and
reports `(6888890, 1000000)`: characters and lines printed in all.
"""

from __future__ import annotations

import io
import os
import signal
import sys

from grader.sandbox.limits import OUTPUT_CAP


class Printed(io.TextIOBase):
    """A text stream keeping the first `cap` characters written and counting all of them."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, cap: int = OUTPUT_CAP):
        super().__init__()
        self.cap = cap
        self.reset()

    def reset(self) -> None:
        self._parts: list[str] = []
        self._kept = 0
        self.chars = 0
        self._newlines = 0
        self._last = "\n"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1  # code that asks for a descriptor (faulthandler, subprocess) writes to the capture file

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self.chars += len(text)
            self._newlines += text.count("\n")
            self._last = text[-1]
            if self._kept <= self.cap:
                piece = text[: self.cap + 1 - self._kept]
                self._parts.append(piece)
                self._kept += len(piece)
        return len(text)

    def flush(self) -> None:
        pass

    def lines(self) -> int:
        return self._newlines + (0 if self._last == "\n" else 1)

    def text(self) -> str:
        return "".join(self._parts)


PRINTED_MARK = "grader-printed: "


def printed_so_far(dump: str) -> tuple[str, tuple[int, int]] | None:
    """(the start of the text, (characters, lines)) a worker said it had printed, from its dump.

    >>> printed_so_far("...\\ngrader-printed: 12 2 a\\\\nb\\n")
    ('a\\nb', (12, 2))
    """
    _, mark, tail = dump.rpartition(PRINTED_MARK)
    if not mark:
        return None
    fields = tail.split("\n", 1)[0].split(" ", 2)
    try:
        chars, lines = int(fields[0]), int(fields[1])
    except (ValueError, IndexError):
        return None
    return (fields[2] if len(fields) > 2 else "").replace("\\n", "\n"), (chars, lines)


def redirect_output(workdir: str, dump_fd: int | None = None):
    """Point the worker's output at a `Printed` stream and a capture file; returns `take()`.

    `take()` gives `(text, total)` and starts afresh: `text` is at most `OUTPUT_CAP`
    characters, `total` is None when nothing was cut, else `(characters, lines)` printed.
    """
    capture = os.open(os.path.join(workdir, "output.txt"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(capture, 1)
    os.dup2(capture, 2)
    printed = Printed()
    # Whatever sys.stdout was in the parent (a test runner's capture, a terminal), the
    # student's prints now go to one stream, in the order they were made.
    sys.stdout = sys.stderr = printed

    def report_printed(signum=None, frame=None) -> None:
        """What was printed so far, counted, on the worker's dump pipe (the judge asks with
        SIGUSR2 before it stops a call at its limit: printing may be what used the time)."""
        if dump_fd is not None:
            head = printed.text()[:200].replace("\n", "\\n")
            os.write(dump_fd, f"\n{PRINTED_MARK}{printed.chars} {printed.lines()} {head}\n".encode("utf-8", "replace"))

    if dump_fd is not None and hasattr(signal, "SIGUSR2"):
        signal.signal(signal.SIGUSR2, report_printed)

    def take() -> tuple[str, tuple[int, int] | None]:
        text, chars, lines = printed.text(), printed.chars, printed.lines()
        printed.reset()
        size = os.fstat(capture).st_size
        if size:  # written below Python: rare; read the start, count the lines of the rest
            os.lseek(capture, 0, os.SEEK_SET)
            raw = os.read(capture, OUTPUT_CAP + 1)
            newlines, chunk = raw.count(b"\n"), raw
            while chunk:
                chunk = os.read(capture, 1 << 20)
                newlines += chunk.count(b"\n")
            os.ftruncate(capture, 0)
            os.lseek(capture, 0, os.SEEK_SET)
            text += raw.decode("utf-8", "replace")
            chars += size
            lines += newlines
        if chars <= OUTPUT_CAP and len(text) <= OUTPUT_CAP:
            return text, None
        return text[:OUTPUT_CAP], (chars, lines)

    return take
