"""Where the student's code was: an exception's own frames, a hung worker's stack dump.

Two sides, both plain text in the end:

- in the worker, `describe_error(err, folder)` turns an exception into plain data keeping
  only the frames of files in the submission folder, the first and last `KEEP` of them:
  a runaway recursion leaves a million frames, and only those few are formatted (walking
  the chain is cheap; reading the source line of every frame is not);
- in the judge, `where_from_dump(text, folder)` reads what `faulthandler` wrote when the
  judge asked a hung worker for its stack (SIGUSR1 at the time limit) or when the worker
  died of a signal, and keeps the student's frames the same way.

Example (a `while True:` in make_windows, the dump the judge reads at the time limit):

    Current thread 0x7f… (most recent call first):
      File "/tmp/w/sub/ex01_windows.py", line 53 in make_windows
      File "/work/main/grader/probes/common.py", line 17 in call_function
    ->  [("ex01_windows.py", 53, "make_windows")], shown as
      File "ex01_windows.py", line 53, in make_windows
        while True:
"""

from __future__ import annotations

import itertools
import linecache
import os
import re
from collections import deque
from pathlib import Path

from grader.model.missing import MissingName, NotImplementedYet

KEEP = 2  # own frames kept at each end of a traceback
MAX_DUMP = 64 * 1024  # bytes of a faulthandler dump the judge reads


def _caret(line: str, start: int | None, end: int | None) -> str:
    """`^^^` under columns start..end of `line` (0-based, end exclusive), or '' when it says nothing."""
    if start is None or end is None or end <= start:
        return ""
    stripped = line.lstrip()
    indent = len(line) - len(stripped)
    start, end = max(start - indent, 0), min(end - indent, len(stripped.rstrip()))
    if end <= start or (start == 0 and end >= len(stripped.rstrip())):
        return ""  # the whole line: a caret adds nothing
    return " " * start + "^" * (end - start)


def frame_text(filename: str, lineno: int | None, name: str | None, line: str = "", caret: str = "") -> str:
    """One frame as Python prints it, with the file's name only (the folder is the worker's)."""
    head = f'  File "{Path(filename).name}", line {lineno}' + (f", in {name}" if name else "")
    body = f"\n    {line.strip()}" if line.strip() else ""
    return head + body + (f"\n    {caret}" if body and caret else "")


def _tb_text(tb, caret_wanted: bool = False) -> str:
    """One traceback entry; the caret only where asked (the line that raised): it costs a row."""
    code = tb.tb_frame.f_code
    line = linecache.getline(code.co_filename, tb.tb_lineno)
    caret = ""
    if caret_wanted and tb.tb_lasti >= 0:
        position = next(itertools.islice(code.co_positions(), tb.tb_lasti // 2, None), None)
        if position and position[0] == position[1] == tb.tb_lineno and None not in position[2:]:
            text = line.rstrip("\n")
            raw = text.encode("utf-8")  # the columns count bytes of UTF-8; the caret counts characters
            start, end = (len(raw[:col].decode("utf-8", "replace")) for col in position[2:])
            caret = _caret(text, start, end)
    return frame_text(code.co_filename, tb.tb_lineno, code.co_name, line, caret)


def own_frames(tb, root: str | None) -> tuple[list, list, int]:
    """The student's first and last `KEEP` traceback entries, and how many there are in all."""
    first, last, count, mine = [], deque(maxlen=KEEP), 0, {}
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        own = mine.get(filename)
        if own is None:
            own = mine[filename] = bool(root) and os.path.realpath(filename).startswith(root)
        if own:
            count += 1
            (first if len(first) < KEEP else last).append(tb)
        tb = tb.tb_next
    return first, list(last), count


def _joined(first: list[str], last: list[str], count: int) -> str:
    skipped = count - len(first) - len(last)
    middle = [f"  … {skipped:,} more" + (" call" if skipped == 1 else " calls")] if skipped > 0 else []
    return "\n".join(first + middle + last)


def _syntax_frame(err: SyntaxError) -> str:
    line = (err.text or "").rstrip("\n")
    start = (err.offset or 0) - 1
    end = (err.end_offset or 0) - 1 if err.end_offset and (err.end_lineno in (None, err.lineno)) else start + 1
    return frame_text(err.filename, err.lineno, None, line, _caret(line, start, max(end, start + 1)) or
                      (_caret(line, start, start + 1) if line.strip() else ""))


def describe_error(err: BaseException, submission_dir: str | None, *, at_import: bool = False) -> dict:
    """An exception as plain data, keeping only the student's frames (bounded, see KEEP).

    Keys: type, mro, message, traceback (text), not_implemented, and when they apply:
    `import_error` (raised while the module was loaded), `own_frames` (how many frames of the
    student's code; a RecursionError has thousands), `name` (a name a probe looked up).
    """
    root = os.path.realpath(submission_dir) + os.sep if submission_dir else None
    first, last, count = own_frames(err.__traceback__, root)
    entries = first + last
    text = _joined([_tb_text(tb, tb is entries[-1]) for tb in first], [_tb_text(tb, tb is entries[-1]) for tb in last],
                   count)
    if isinstance(err, SyntaxError) and err.filename and root and os.path.realpath(err.filename).startswith(root):
        text = "\n".join(t for t in (text, _syntax_frame(err)) if t)
    mro = [c.__name__ for c in type(err).__mro__]
    described = {"type": type(err).__name__, "mro": mro, "traceback": text,
                 "not_implemented": isinstance(err, (NotImplementedError, NotImplementedYet))}
    missing = getattr(err, "name", None) if isinstance(err, (MissingName, AttributeError)) else None
    if isinstance(err, MissingName) or (type(err) is AttributeError and missing and
                                        re.match(r"module 'ex\d\d_\w+' has no attribute", str(err))):
        # a probe looked up a name the exercise file does not define: no traceback to show
        if not missing:
            found = re.search(r"(\w+) is not defined|no attribute '(\w+)'", str(err))
            missing = next((g for g in found.groups() if g), "?") if found else "?"
        return {**described, "type": "MissingName", "mro": ["MissingName"] + mro, "traceback": "",
                "name": str(missing), "message": f"{missing} is not defined"}
    try:
        if isinstance(err, SyntaxError):
            message = err.msg or str(err)
        else:
            message = str(err)
    except BaseException:  # noqa: BLE001 - a student's exception whose __str__ fails (even with SystemExit)
        message = "<unprintable>"
    described["message"] = message[:1000]
    if at_import:
        described["import_error"] = True
    if count:  # how deep in the code's own files (a runaway recursion); none: raised before reaching them
        described["own_frames"] = count
    return described


_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+) in (?P<name>\S+)\s*$')
_FATAL = re.compile(r"^Fatal Python error: (?P<what>.+)$", re.M)


def where_from_dump(dump: str, folder: str | None, *, reference_root: str | None = None) -> tuple[str, str]:
    """(the fatal error faulthandler named or '', the student's frames as text) from a dump.

    A frame is the student's when its file's name is one of the .py files of the submission
    `folder` (the worker runs a private copy of it, so the folders differ) and it is not
    under the kit's package. Most recent call first in the dump; shown oldest first, with
    the source line read from the submission's own file.
    """
    from grader.model.paths import PACKAGE_DIR

    dump = dump[:MAX_DUMP]
    fatal = _FATAL.search(dump)
    names = {p.name for p in Path(folder).glob("*.py")} if folder else set()
    package = str(reference_root or PACKAGE_DIR)
    threads = re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump)
    best: list[tuple[str, int, str]] = []
    for block in threads:
        frames = []
        for line in block.splitlines():
            m = _DUMP_FRAME.match(line)
            if m and Path(m["file"]).name in names and not m["file"].startswith(package):
                frames.append((Path(m["file"]).name, int(m["line"]), m["name"]))
        if frames and (not best or block.lstrip().startswith("Current thread")):
            best = frames
            if block.lstrip().startswith("Current thread"):
                break
    best.reverse()  # oldest first, as a traceback reads
    texts = [frame_text(name, line, func, _source_line(folder, name, line)) for name, line, func in best]
    if len(texts) > 2 * KEEP:
        texts = texts[:KEEP] + [f"  … {len(texts) - 2 * KEEP:,} more calls"] + texts[-KEEP:]
    return (fatal["what"].strip() if fatal else ""), "\n".join(texts)


def _source_line(folder: str | None, name: str, lineno: int) -> str:
    if not folder:
        return ""
    try:
        with open(Path(folder) / name, encoding="utf-8", errors="replace") as f:
            return next(itertools.islice(f, lineno - 1, None), "")
    except OSError:
        return ""
