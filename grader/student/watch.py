"""`grade watch [exNN]`: re-grade an exercise every time its file is saved.

    $ grade watch            # starts at the first exercise not passed yet
    $ grade watch ex03

One zygote (torch loaded) serves the whole session, the reference answers are computed
once and cached across re-grades, and the heap is frozen after the first grade (pytest
runs a full garbage collection after every session), so a re-grade after a save costs
the checks themselves: about 0.15 s for a small exercise (bench/bench_watch.py).

Saving an exercise file grades that exercise; when it passes, the next exercise not
passed yet becomes the one watched. Single keys, read from the terminal in cbreak mode
(termios; works over SSH; no curses): `h` the next hint, `l` the list with progress,
`n` the next unfinished exercise, `r` re-grade, `q` quit. Ctrl-C quits too; the terminal
is restored either way. When stdin is not a terminal, only saves are watched.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import sys
import threading
import time
from pathlib import Path

import click

from grader.model.messages import say

STEP_MS = 30  # a save is graded once the folder has been quiet this long


class WatchSession:
    """Grades one exercise at a time, keeping the zygote, torch and the references loaded."""

    def __init__(self, course, folder: Path, lang: str, *, picture_dir: Path | None = None):
        self.course = course
        self.folder = Path(folder).resolve()
        self.lang = lang
        self.picture_dir = picture_dir
        self.zygote = None
        self.references = None
        self.recorded = False
        self.corpus = None
        self._frozen = False

    def start(self) -> "WatchSession":
        from grader.run.startup import corpus_provider, load_judge, references_for, start_zygote

        self.zygote = start_zygote(self.course)  # before torch and the reference are loaded here
        load_judge()
        self.references, self.recorded = references_for(self.course)
        self.corpus = corpus_provider(self.course)
        return self

    def grade(self, exercise_id: str, on_progress=None):
        """Grade one exercise; the results, and remember the attempt in the student's folder."""
        from grader.student.progress import record_attempt
        from grader.run.session import GradingSession, run_checks

        session = GradingSession(self.course, [exercise_id], submission=self.folder, zygote=self.zygote,
                                 references=self.references, lang=self.lang, corpus=self.corpus,
                                 public_only=self.recorded, on_progress=on_progress)
        results = run_checks(session)
        record_attempt(self.folder, results)
        if not self._frozen:
            # Everything loaded so far lives as long as the session: keep it out of the
            # collections pytest runs after every session (measured: 0.35 s of 0.5 s).
            from grader.run.startup import freeze_loaded

            freeze_loaded()
            self._frozen = True
        return results

    def render(self, results, *, color: bool) -> str:
        from grader.report.text import render_text

        return render_text(results, self.lang, color=color, hidden_note=self.recorded,
                           picture_dir=self.picture_dir)

    def zygote_alive(self) -> bool:
        try:
            pid, _ = os.waitpid(self.zygote.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None


class Keys:
    """Single keys from the terminal in cbreak mode (no echo, no Enter), restored on close.

    Reads from a duplicate of fd 0, so that pytest's capture (which points fd 0 at
    /dev/null while checks run) does not cut the keyboard off.
    """

    def __init__(self, events: queue.Queue, stop: threading.Event):
        self.events, self.stop = events, stop
        self.fd = None
        self.saved = None
        self.thread = None

    def start(self) -> bool:
        try:
            if not os.isatty(0):
                return False
            import termios
            import tty

            self.fd = os.dup(0)
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        except (OSError, ImportError, Exception):  # noqa: BLE001 - no terminal: saves only
            self.close()
            return False
        self.thread = threading.Thread(target=self._read, name="grade-watch-keys", daemon=True)
        self.thread.start()
        return True

    def again(self) -> None:
        """Back into cbreak mode (after Ctrl-Z and fg the shell has reset the terminal)."""
        if self.fd is not None:
            import termios
            import tty

            try:
                tty.setcbreak(self.fd, termios.TCSANOW)
            except OSError:
                pass

    def _read(self) -> None:
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(self.fd, 32)
            except (OSError, ValueError):
                return
            if not data:
                return
            for ch in data.decode("utf-8", "ignore"):
                self.events.put(("key", ch))

    def close(self) -> None:
        if self.fd is None:
            return
        if self.saved is not None:
            import termios

            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            except OSError:
                pass
        if self.thread is not None:
            self.stop.set()
            self.thread.join(timeout=1)
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.fd = None


def watch_saves(folder: Path, events: queue.Queue, stop: threading.Event) -> threading.Thread:
    """A thread putting ("save", {file names}) on `events` whenever a .py file in `folder` changes."""
    import watchfiles

    def only_py(change, path: str) -> bool:
        p = Path(path)
        return p.suffix == ".py" and p.parent == folder and not p.name.startswith(".")

    def run():
        try:
            for changes in watchfiles.watch(folder, watch_filter=only_py, stop_event=stop, step=STEP_MS,
                                            debounce=800, raise_interrupt=False, recursive=False,
                                            yield_on_timeout=False):
                events.put(("save", {Path(p).name for _, p in changes}, time.monotonic()))
        except Exception as err:  # noqa: BLE001 - say so, and keep the keys working
            events.put(("error", f"watchfiles: {err}"))

    thread = threading.Thread(target=run, name="grade-watch-files", daemon=True)
    thread.start()
    return thread


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

    # -- output

    def echo(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def style(self, text: str, **kw) -> str:
        return click.style(text, **kw) if self.color else text

    def header(self) -> None:
        ex = self.course.exercise(self.current)
        if self.clear:
            self.out.write("\x1b[H\x1b[2J")
        self.echo(self.style(say("watch_header", self.lang, id=ex.id, title=ex.title(self.lang),
                                 file=_relative(self.session.folder / ex.file)), bold=True))
        self.echo(self.style(say("watch_keys" if self.has_keys else "watch_no_keys", self.lang), dim=True))
        self.echo()

    # -- actions

    def grade(self, exercise_id: str) -> None:
        from grader.student.progress import next_unfinished, progress_of

        self.current = exercise_id
        self.announced = False
        self.suggested_hint = None
        self.header()
        self.echo(self.style(say("watch_grading", self.lang, id=exercise_id), dim=True))
        started = time.monotonic()
        try:
            results = self.session.grade(exercise_id, on_progress=self.progress if self.clear else None)
        except Exception as err:  # noqa: BLE001 - a broken check or a dead zygote must not end the session
            detail = f"{type(err).__name__}: {err}"
            if self.session.zygote is not None and not self.session.zygote_alive():
                detail += " (zygote gone: restart grade watch)"
            self.echo(self.style(say("watch_error", self.lang, detail=detail), fg="red"))
            return
        seconds = time.monotonic() - started
        levels = [c.finding.diagnosis.get("hint") for r in results for c in r.checks
                  if c.finding is not None and c.finding.diagnosis and c.finding.diagnosis.get("hint")]
        self.suggested_hint = min(levels) if levels else None
        if self.clear:
            self.header()
        else:
            self.out.write("\n")
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

    def progress(self, event: str, item, result=None) -> None:
        """Check by check, and within a long call (ex12 trains for a while) a bar."""
        try:
            from grader.student.progress import bar
            from grader.model.results import title_from_doc

            if event == "start":
                self._title = title_from_doc(getattr(item.function, "__doc__", None), item.name)(self.lang)
                self.out.write(f"\r\x1b[K  … {self._title}")
            elif event == "call" and isinstance(result, tuple) and len(result) == 2 and result[1]:
                done, total = result
                self.out.write(f"\r\x1b[K  … {getattr(self, '_title', '')}  {bar(done, total, 20)} {done}/{total}")
            elif event == "done" and result is not None:
                title = result.title(self.lang)
                mark = self.style("✓", fg="green") if result.passed else self.style("✗", fg="red")
                self.out.write(f"\r\x1b[K  {mark} {title}\n")
            self.out.flush()
        except Exception:  # noqa: BLE001 - progress is a courtesy; never break a grade
            pass

    def hint(self) -> None:
        """The next hint level; first, the level the last diagnosis pointed to, if not seen yet."""
        from grader.student.hints import level_seen, next_hint

        ex = self.course.exercise(self.current)
        level = None
        if self.suggested_hint and self.suggested_hint > level_seen(ex, self.session.folder):
            level = min(self.suggested_hint, len(ex.hints))
            self.suggested_hint = None
        self.echo()
        self.echo(next_hint(ex, self.lang, level=level, state_dir=self.session.folder))

    def listing(self) -> None:
        from grader.student.progress import status_lines

        self.echo()
        self.echo("\n".join(status_lines(self.course, self.session.folder, self.lang, color=self.color,
                                         current=self.current)))

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

    def exercise_of(self, names: set[str]) -> str:
        """The exercise a save belongs to: the watched one if its file was saved, else the saved one."""
        by_file = {ex.file: ex.id for ex in self.course.exercises}
        saved = [by_file[n] for n in sorted(names) if n in by_file]
        if self.current in saved or not saved:
            return self.current  # a helper file the exercise may import: grade the current one
        return saved[-1]

    # -- the loop

    def run(self, first: str) -> None:
        self.has_keys = self.keys.start()
        watch_saves(self.session.folder, self.events, self.stop)
        previous = {}

        def interrupt(signum, frame):
            raise KeyboardInterrupt

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
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
                for ev in pending:
                    if ev[0] == "save":
                        saved |= ev[1]
                    elif ev[0] == "error":
                        self.echo(self.style(say("watch_error", self.lang, detail=ev[1]), fg="red"))
                    elif ev[0] == "key":
                        if self.key(ev[1]) == "quit":
                            return
                if saved:
                    self.grade(self.exercise_of(saved))
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


def _own_stdout():
    try:
        return open(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's capture)
        return sys.stdout


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


