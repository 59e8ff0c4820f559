"""The grading side of `grade watch`: one zygote, torch and the references loaded for the session.

    session = WatchSession(course, folder, "en").start()
    results = session.grade("ex03")          # the first grade loads the references
    results = session.grade("ex03")          # a re-grade costs the checks themselves
    session.interrupt()                      # from another thread: a save stops the grade now
    session.close()
"""

from __future__ import annotations

from pathlib import Path


class GradeCancelled(Exception):
    """A save came while grading: the grade stopped at once (see WatchSession.interrupt)."""


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

        self.zygote = start_zygote(self.course, lang=self.lang)  # before the reference is loaded here
        load_judge()
        self.references, self.recorded = references_for(self.course)
        self.corpus = corpus_provider(self.course)
        return self

    def grade(self, exercise_id: str, on_progress=None, cancelled=None):
        """Grade one exercise; the results, and remember the attempt in the student's folder.

        `cancelled` (a threading.Event) set while grading: GradeCancelled, and no attempt recorded.
        """
        from grader.student.progress import record_attempt
        from grader.run.session import GradingSession, run_checks

        session = GradingSession(self.course, [exercise_id], submission=self.folder, zygote=self.zygote,
                                 references=self.references, lang=self.lang, corpus=self.corpus,
                                 public_only=self.recorded, on_progress=on_progress)
        results = run_checks(session)
        if cancelled is not None and cancelled.is_set():
            raise GradeCancelled
        record_attempt(self.folder, results)
        if not self._frozen:
            # Everything loaded so far lives as long as the session: keep it out of the
            # collections pytest runs after every session (most of a re-grade's time otherwise).
            from grader.run.startup import freeze_loaded

            freeze_loaded()
            self._frozen = True
        return results

    def render(self, results, *, color: bool) -> str:
        """The student's view, as `grade exNN` shows it: hidden checks' inputs and values left out
        (grader.report.render applies grader.report.student_view)."""
        from grader.report.render import render

        return render(results, "text", self.lang, color=color, hidden_note=self.recorded,
                      picture_dir=self.picture_dir)

    def interrupt(self) -> None:
        """Stop the grade running now (called from another thread when a file is saved).

        Every worker of the session is killed: the call waiting on one returns at once (as a
        crash nobody will see), and `WatchLoop` drops the results and grades the new file.
        """
        for worker in list(self.zygote.live):
            worker.stop()

    def zygote_alive(self) -> bool:
        return self.zygote.alive()  # spawned workers: always (no zygote process to lose)

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
