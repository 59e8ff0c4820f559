"""Saves of the exercise files, for `grade watch`: a thread putting ("save", names, time) on a queue.

`watch_saves(folder, events, stop, on_save=...)` watches the .py files directly in `folder`
(watchfiles, quiet for 30 ms); `on_save(names)` is called from the watching thread at once,
so a save of the file being graded can stop that grade, and a save of another exercise's
file is said to wait for it (see WatchLoop.saved_while_grading).
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

STEP_MS = 30  # a save is graded once the folder has been quiet this long


def watch_saves(folder: Path, events: queue.Queue, stop: threading.Event, on_save=None) -> threading.Thread:
    """A thread putting ("save", {file names}) on `events` whenever a .py file in `folder` changes.

    `on_save(names)` runs in this thread too: it may stop a grade the main thread is running.
    """
    import watchfiles

    def only_py(change, path: str) -> bool:
        p = Path(path)
        return p.suffix == ".py" and p.parent == folder and not p.name.startswith(".")

    def run():
        try:
            for changes in watchfiles.watch(folder, watch_filter=only_py, stop_event=stop, step=STEP_MS,
                                            debounce=800, raise_interrupt=False, recursive=False,
                                            yield_on_timeout=False):
                names = {Path(p).name for _, p in changes}
                events.put(("save", names, time.monotonic()))
                if on_save is not None:
                    on_save(names)
        except Exception as err:  # noqa: BLE001 - say so, and keep the keys working
            events.put(("error", f"watchfiles: {err}"))

    thread = threading.Thread(target=run, name="grade-watch-files", daemon=True)
    thread.start()
    return thread
