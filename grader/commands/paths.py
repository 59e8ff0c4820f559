"""The path parameters of every command: click's Path, but an empty one is a usage error.

An empty argument is a script's unset variable (`grade batch "$SUBMISSIONS" --out "$OUT"`),
and `Path("")` is the working folder: a batch would grade the kit as a cohort, or write its
gradebook, a release or a Gradescope bundle into whatever folder the command ran in.

    >>> AnyPath().convert("", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: 不能为空 / must not be empty

A report written to a file (`grade all --out report.xml`) is checked the same way before
anything is graded: a missing folder or a folder given for the file is said at once, not
after a minute of grading as a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from grader.cohort.layout import inside_an_out


class AnyPath(click.Path):
    """`click.Path(path_type=Path, ...)` that refuses an empty string."""

    def __init__(self, **options):
        super().__init__(path_type=Path, **options)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("不能为空 / must not be empty", param, ctx)
        return super().convert(value, param, ctx)


class OutputFile(AnyPath):
    """A file a command writes its report into: refused, before any work, when it cannot be.

    An existing file (or /dev/stdout) is written over; a new one needs a writable folder. A
    file inside `grade batch`'s OUT is refused: it would replace that batch's gradebook.
    """

    def __init__(self):
        super().__init__(dir_okay=False)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        folder = Path(os.path.abspath(path)).parent
        if not folder.is_dir():
            self.fail(f"文件夹不存在 / its folder does not exist: {folder}", param, ctx)
        if not os.access(path if path.exists() else folder, os.W_OK):
            self.fail(f"无法写入 / cannot be written: {path}", param, ctx)
        if inside_an_out(os.path.realpath(folder)):
            self.fail(f"在 grade batch 的输出目录里，会覆盖它的成绩 / is inside grade batch's OUT and would "
                      f"overwrite its gradebook: {path}", param, ctx)
        # what is written is where a link leads: `--out report.json -> ex01_windows.py` is the code file
        device = os.path.abspath(path).startswith("/dev/")  # /dev/stdout, /dev/null: written, a pipe or not
        target = Path(os.path.realpath(path)) if not device else path
        if path.suffix.lower() in (".py", ".ipynb") or target.suffix.lower() in (".py", ".ipynb"):
            # `--out ex01_windows.py`: the student's work, never a report
            self.fail(f"是代码文件，报告会覆盖它 / is a code file the report would overwrite: {path}", param, ctx)
        if not device and _is_fifo(path):
            self.fail(f"是 FIFO，没有读者时写入会一直等 / is a FIFO (writing would wait for a reader): {path}",
                      param, ctx)
        return path


def _is_fifo(path: Path) -> bool:
    """A FIFO, or a link to one (never raises: a dangling link is a new file)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


class OutputFolder(AnyPath):
    """A folder a command builds (a release, nbgrader's course, a student's exercises), or a
    file it writes with `file_okay=True` (the Gradescope bundle): made with its parents, so
    the nearest folder that exists must be one this user can write into.
    """

    def __init__(self, file_okay: bool = False):
        super().__init__(file_okay=file_okay)  # click's Path refuses an existing file unless file_okay

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        target = Path(os.path.abspath(path))
        # written into: the folder itself when it exists, else what will hold it
        nearest = target if target.is_dir() and not self.file_okay else target.parent
        while not nearest.exists():
            nearest = nearest.parent
        if not nearest.is_dir():
            self.fail(f"{nearest} 不是文件夹 / is not a folder", param, ctx)
        if not os.access(nearest, os.W_OK | os.X_OK):
            self.fail(f"无法写入 / cannot be written: {nearest}", param, ctx)
        if inside_an_out(os.path.realpath(nearest)):
            self.fail(f"在 grade batch 的输出目录里 / is inside grade batch's OUT: {path}", param, ctx)
        return path
