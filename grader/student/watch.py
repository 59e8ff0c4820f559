"""`grade watch [exNN]`: re-grade an exercise every time its file is saved.

    $ grade watch            # starts at the first exercise not passed yet
    $ grade watch ex03

One zygote (torch loaded) serves the whole session, the reference answers are computed
once and cached across re-grades, and the heap is frozen after the first grade (pytest
runs a full garbage collection after every session), so a re-grade after a save costs
the checks themselves (bench/bench_watch.py measures it).

Saving an exercise file grades that exercise; when it passes, the next exercise not
passed yet becomes the one watched. A save of the file being graded stops that grade (its
result would be of the old file) and grades the new one; a save of another exercise's file
while one is graded (ex12 trains for minutes) waits its turn: the running grade finishes,
its result is shown and recorded, then the saved exercise is graded below it. Every line
is wrapped to the terminal's width (grader.report.layout.wrap), never inside a character.

Single keys, read from the terminal in cbreak mode (termios; works over SSH; no curses):
`h` the next hint of the exercise on screen, `l` the list with progress, `n` the next
unfinished exercise, `r` re-grade, `q` quit. Ctrl-C quits too; the terminal is restored
either way. When stdin is not a terminal, only saves are watched.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from pathlib import Path

import click

from grader.model.messages import say

from grader.student.keys import Keys, _own_stdout
from grader.student.saves import STEP_MS, watch_saves
from grader.student.watch_session import GradeCancelled, WatchSession

__all__ = ["WatchLoop", "WatchSession", "Keys", "watch_saves", "first_exercise", "STEP_MS"]


class WatchLoop:
    """What the student sees and what the keys do."""

    def __init__(self, session: WatchSession, out=None, *, color: bool = False, clear: bool = False):
        self.session = session
        self.course = session.course
        self.lang = session.lang
        # A duplicate of fd 1: pytest's capture points fd 1 elsewhere while a check runs,
        # and the check-by-check progress is written from inside that window.
        self.out = out or _own_stdout()
        self.color = color
        self.clear = clear
        self.current: str | None = None
        self.events: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.keys = Keys(self.events, self.stop)
        self.has_keys = False
        self.announced = False  # `current` is the next exercise, announced after a pass, not graded yet
        self.suggested_hint: int | None = None  # the hint level the last diagnosis pointed to
        self.on_graded = None  # a callable(results, seconds), for the benchmark and tests
        self.grading = False  # a grade is running in the main thread
        self.cancelled = threading.Event()  # set by a save of its file while grading: the grade stops at once
        self.shown: str | None = None  # the exercise whose result is on screen (`h` gives its hint)
        self.shown_at = 0.0  # when the last result shown was ready (time.monotonic): saves before it waited
        self.writing = threading.Lock()  # the file-watching thread writes a line too

    # -- output

    def echo(self, text: str = "") -> None:
        """A line (or several), wrapped to the terminal's width without cutting a character."""
        from grader.report.layout import wrap

        self.write(wrap(text, self.columns()) + "\n")

    def write(self, text: str) -> None:
        with self.writing:
            self.out.write(text)
            self.out.flush()

    def columns(self) -> int | None:
        """The terminal's width (None when the output is not a terminal: nothing is wrapped)."""
        from grader.report.layout import terminal_width

        return terminal_width(self.out) if self.clear else None

    def style(self, text: str, **kw) -> str:
        return click.style(text, **kw) if self.color else text

    def header(self, *, below: bool = False) -> None:
        """The watched exercise's title line; the screen cleared first, unless `below` (a result
        still unread above, from a grade that ran while this exercise was saved)."""
        ex = self.course.exercise(self.current)
        if self.clear and not below:
            self.write("\x1b[H\x1b[2J")
        elif below:
            self.echo()
        self.echo(self.style(say("watch_header", self.lang, id=ex.id, title=ex.title(self.lang),
                                 file=_relative(self.session.folder / ex.file)), bold=True))
        self.echo(self.style(say("watch_keys" if self.has_keys else "watch_no_keys", self.lang), dim=True))
        self.echo()

    # -- actions

    def grade(self, exercise_id: str, *, below: bool = False) -> None:
        """Grade, show and record one exercise; `below`: under the result on screen (see header)."""
        from grader.student.progress import next_unfinished, progress_of

        self.current = exercise_id
        self.announced = False
        self.suggested_hint = None
        self.header(below=below)
        self.echo(self.style(say("watch_grading", self.lang, id=exercise_id), dim=True))
        started = time.monotonic()
        self.cancelled.clear()
        self.grading = True
        try:
            results = self.session.grade(exercise_id, on_progress=self.progress, cancelled=self.cancelled)
        except GradeCancelled:
            results = None
        except Exception as err:  # noqa: BLE001 - a broken check or a dead zygote must not end the session
            self.grading = False
            if self.cancelled.is_set():
                return
            detail = f"{type(err).__name__}: {err}"
            if self.session.zygote is not None and not self.session.zygote_alive():
                detail += " (zygote gone: restart grade watch)"
            self.echo(self.style(say("watch_error", self.lang, detail=detail), fg="red"))
            self.shown_at = time.monotonic()
            return
        finally:
            self.grading = False
        if results is None or self.cancelled.is_set():
            # its file was saved again while grading: the results are of the old file; the save is next in the queue
            self.write("\r\x1b[K")
            self.echo(self.style(say("watch_cancelled", self.lang), dim=True))
            return
        self.shown, self.shown_at = exercise_id, time.monotonic()
        seconds = self.shown_at - started
        levels = [c.finding.diagnosis.get("hint") for r in results for c in r.checks
                  if c.finding is not None and c.finding.diagnosis and c.finding.diagnosis.get("hint")]
        self.suggested_hint = min(levels) if levels else None
        if self.clear and not below:
            self.header()
        else:
            self.write("\r\x1b[K\n" if self.clear else "\n")
        self.echo(self.session.render(results, color=self.color))
        self.echo()
        self.echo(self.style(say("watch_took", self.lang, seconds=f"{seconds:.2f}", time=time.strftime("%H:%M:%S")),
                             dim=True))
        if results and results[0].passed:
            following = next_unfinished(progress_of(self.course, self.session.folder), after=exercise_id)
            if following is None:
                self.echo(self.style(say("watch_all_done", self.lang), fg="green", bold=True))
            else:
                ex = self.course.exercise(following)
                self.echo(self.style(say("watch_passed", self.lang, id=exercise_id,
                                         next=f"{ex.id} {ex.title(self.lang)}",
                                         file=_relative(self.session.folder / ex.file)), fg="green", bold=True))
                self.current = following
                self.announced = True
        if self.on_graded:
            self.on_graded(results, seconds)

    def saved_while_grading(self, names) -> None:
        """From the file-watching thread: a save of the file being graded stops that grade now;
        another exercise's save is said to wait for it (the main loop grades it next)."""
        if not self.grading:
            return
        saved = self.exercises_of(names)
        if self.current in saved:
            self.cancelled.set()
            self.session.interrupt()
        elif saved:
            self.write("\r\x1b[K")
            self.echo(self.style(say("watch_queued", self.lang, ids=", ".join(saved), current=self.current), dim=True))

    def progress(self, event: str, item, result=None) -> None:
        """Check by check, and within a long call (ex12 trains for a while) a bar."""
        if event == "start" and self.cancelled.is_set():
            import pytest

            pytest.exit("saved again")  # no further check starts: a newer save is waiting
        if not self.clear:
            return
        try:
            from grader.student.progress import bar
            from grader.model.results import title_from_doc

            if event == "start":
                self._title = title_from_doc(getattr(item.function, "__doc__", None), item.name)(self.lang)
                self.write("\r\x1b[K" + self._one_row(f"  … {self._title}"))
            elif event == "call" and isinstance(result, tuple) and len(result) == 2 and result[1]:
                done, total = result
                count = f"  {bar(done, total, 20)} {done}/{total}"
                self.write("\r\x1b[K" + self._one_row(f"  … {getattr(self, '_title', '')}", keep=count))
            elif event == "done" and result is not None:
                title = result.title(self.lang)
                mark = self.style("✓", fg="green") if result.passed else self.style("✗", fg="red")
                self.write("\r\x1b[K")
                self.echo(f"  {mark} {title}")
        except Exception:  # noqa: BLE001 - progress is a courtesy; never break a grade
            pass

    def _one_row(self, text: str, keep: str = "") -> str:
        """`text` + `keep` on one row of the terminal, `text` clipped (never inside a character):
        a line the terminal wrapped would stay behind when the next one is drawn over it."""
        import wcwidth

        room = (self.columns() or 10_000) - 1 - wcwidth.width(keep)
        return (wcwidth.clip(text, 0, room) if wcwidth.width(text) > room else text) + keep

    def hint(self) -> None:
        """The next hint level of the exercise on screen (after a pass, the one that passed, not the
        one announced next); first, the level the last diagnosis pointed to, if not seen yet."""
        from grader.student.hints import ladder, level_seen, next_hint

        ex = self.course.exercise(self.shown or self.current)
        level = None
        if self.suggested_hint and self.suggested_hint > level_seen(ex, self.session.folder):
            level = min(self.suggested_hint, len(ladder(ex)))
            self.suggested_hint = None
        self.echo()
        self.echo(next_hint(ex, self.lang, level=level, state_dir=self.session.folder))

    def listing(self) -> None:
        from grader.student.progress import status_lines

        self.echo()
        self.echo("\n".join(status_lines(self.course, self.session.folder, self.lang, color=self.color,
                                         current=self.current, width=self.columns())))

    def next_exercise(self) -> None:
        from grader.student.progress import next_unfinished, progress_of

        if self.announced:  # the exercise announced after a pass
            self.grade(self.current)
            return
        following = next_unfinished(progress_of(self.course, self.session.folder), after=self.current)
        if following is None:
            self.echo(say("watch_all_done", self.lang))
        else:
            self.grade(following)

    def exercises_of(self, names: set[str]) -> list[str]:
        """The exercises saves belong to, each once: the watched one first if its file was saved,
        or a file that is no exercise's (a helper it may import), then the others in course order."""
        by_file = {ex.file: ex.id for ex in self.course.exercises}
        saved = {by_file[n] for n in names if n in by_file}
        if any(n not in by_file for n in names):
            saved.add(self.current)
        order = [self.current] + [ex.id for ex in self.course.exercises if ex.id != self.current]
        return [e for e in order if e in saved]

    # -- the loop

    def run(self, first: str) -> None:
        self.has_keys = self.keys.start()
        watch_saves(self.session.folder, self.events, self.stop, on_save=self.saved_while_grading)
        previous = {}

        def interrupt(signum, frame):
            raise KeyboardInterrupt

        for sig in [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]:
            previous[sig] = signal.signal(sig, interrupt)
        if hasattr(signal, "SIGCONT"):
            previous[signal.SIGCONT] = signal.signal(signal.SIGCONT, lambda *_: self.keys.again())
        try:
            self.grade(first)
            while True:
                try:
                    event = self.events.get(timeout=0.5)
                except queue.Empty:
                    continue
                pending = [event]
                while True:  # everything that arrived while grading: one action per kind
                    try:
                        pending.append(self.events.get_nowait())
                    except queue.Empty:
                        break
                saved: set[str] = set()
                waited = False  # a save made while a grade ran: its result is on screen, unread
                for ev in pending:
                    if ev[0] == "save":
                        saved |= ev[1]
                        waited = waited or ev[2] <= self.shown_at
                    elif ev[0] == "error":
                        self.echo(self.style(say("watch_error", self.lang, detail=ev[1]), fg="red"))
                    elif ev[0] == "key":
                        if self.key(ev[1]) == "quit":
                            return
                for n, exercise_id in enumerate(self.exercises_of(saved)):
                    self.grade(exercise_id, below=waited or n > 0)
        except KeyboardInterrupt:
            return
        finally:
            self.stop.set()
            self.keys.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.echo()
            self.echo(say("watch_bye", self.lang, path=_relative(self.session.folder / ".grade-state.json")))

    def key(self, ch: str) -> str | None:
        ch = ch.lower()
        if ch in ("q", "\x04"):  # q, or Ctrl-D
            return "quit"
        if ch == "h":
            self.hint()
        elif ch == "l":
            self.listing()
        elif ch == "n":
            self.next_exercise()
        elif ch == "r":
            self.grade(self.current)
        return None


def _relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def first_exercise(course, folder: Path) -> str:
    """The first exercise not passed yet (the first exercise when all pass)."""
    from grader.student.progress import progress_of

    rows = progress_of(course, folder)
    return next((r.exercise.id for r in rows if not r.done), course.exercises[0].id)


