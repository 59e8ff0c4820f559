"""A progress bar on the terminal while a long check runs (ex12's training loop).

Only when stderr is a terminal; the bar disappears when the check ends, so the report
that follows is the same as without it.
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
        self._tasks: dict[str, int] = {}
        self._title = ""

    def __enter__(self) -> "LiveProgress":
        if self.enabled:
            self._progress = progress_bar(counts="items", transient=True)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, event: str, item, result=None) -> None:
        if self._progress is None:
            return
        if event == "start":  # remember the running check's name for the bar
            from grader.model.results import title_from_doc

            self._title = title_from_doc(item.function.__doc__, item.name)(self.lang)
        elif event == "call":
            done, total = result
            task = self._tasks.get(item)
            if task is None:
                task = self._tasks[item] = self._progress.add_task(self._title[:40] or str(item)[:40], total=total)
            self._progress.update(task, completed=done, total=total)
        elif event == "done":
            for task in self._tasks.values():
                self._progress.remove_task(task)
            self._tasks.clear()
