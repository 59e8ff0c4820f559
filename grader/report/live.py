"""What is running, on the terminal while checks run: the check's name and its seconds,
and a bar while a long call reports progress (ex12's training loop).

No check is silent: the running one is named at once, with a clock, so an endless loop
reads "… make_windows: random lengths  0:00:07", not a blank screen. Only when stderr is a
terminal; the line disappears when the checks end, so the report that follows is the same
as without it.
"""

from __future__ import annotations

import sys


def progress_bar(*, counts: str = "items", transient: bool = True):
    """The one progress-bar factory: a started rich `Progress` on stderr.

    `counts="items"` shows done/total with elapsed time and ETA (checks, students);
    `counts="bytes"` shows size, speed and ETA (downloads). The caller adds its tasks and
    calls `.stop()`; a transient bar leaves nothing behind, so the report after it reads
    the same as without it.
    """
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

    if counts == "bytes":
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TimeRemainingColumn())
    elif counts == "check":  # the running check: its name, a bar once it reports progress, its seconds
        from rich.progress import SpinnerColumn

        columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                   TextColumn("{task.fields[count]}"), TimeElapsedColumn())
    else:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TimeRemainingColumn())
    bar = Progress(*columns, console=Console(stderr=True), transient=transient)
    bar.start()
    return bar


class LiveProgress:
    """Receives the grading session's progress events and draws a transient bar."""

    def __init__(self, enabled: bool | None = None, lang: str = "zh"):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.lang = lang
        self._progress = None
        self._task = None
        self._title = ""

    def __enter__(self) -> "LiveProgress":
        if self.enabled:
            self._progress = progress_bar(counts="check", transient=True)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, event: str, item, result=None) -> None:
        if self._progress is None:
            return
        if event == "start":  # name the running check at once, with its clock
            from grader.model.results import title_from_doc

            self._title = title_from_doc(item.function.__doc__, item.name)(self.lang)
            self._drop()
            self._task = self._progress.add_task(_cut(self._title, 48), total=None, count="")
        elif event == "call" and self._task is not None:
            done, total = result
            self._progress.update(self._task, completed=done, total=total, count=f"{done}/{total}")
        elif event == "done":
            self._drop()

    def _drop(self) -> None:
        if self._task is not None:
            self._progress.remove_task(self._task)
            self._task = None


def _cut(text: str, limit: int) -> str:
    from grader.report.layout import width

    if width(text) <= limit:
        return text
    out, used = "", 0
    for ch in text:
        used += width(ch)
        if used >= limit:
            return out + "…"
        out += ch
    return out
