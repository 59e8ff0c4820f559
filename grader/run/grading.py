"""`grade exNN` / `grade all`: from options to an exit code.

The zygote is started first (see `grader.run.startup`), before the reference solutions or the
checks are loaded here, so workers forked from it hold none of them. A student's own run is
graded in the practice tier; `--submission` as root or in CI is an official run, in bubblewrap
or, chosen explicitly, the container tier (`grader.sandbox.isolation`).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click

from grader.model.course import Course
from grader.model.messages import say
from grader.report.render import render
from grader.run.outputs import Output
from grader.run.startup import corpus_provider, freeze_loaded, load_judge, references_for, start_zygote
from grader.sandbox import NoProcess, Overloaded, ZygoteGone

GRADER_FAULT = 3  # the exit code when the grader could not finish (not the submission's doing)


def inner_exercises(folder: Path, course: Course) -> Path:
    """`--submission DIR` of a `grade init` folder: its `exercises/` (a real folder, not a link)
    when that holds a course exercise file (a regular file), as `grade batch` reads a student's
    folder (grader.cohort.students.holds_course_files); else DIR."""
    from grader.model.course import holds_course_files

    inner = folder / "exercises"
    listing = {}
    try:
        if not stat.S_ISDIR(os.lstat(inner).st_mode):
            return folder
        with os.scandir(inner) as entries:
            for entry in entries:
                try:
                    listing[entry.name] = entry.stat(follow_symlinks=False)
                except OSError:  # gone since the listing (an editor's temporary file)
                    pass
    except OSError:
        return folder
    return inner if holds_course_files(listing, course) else folder


def gone_text(err: Exception, lang: str, *, batch: bool = False) -> str:
    """Why a run stopped without a result that is not the submission's doing, in the user's words."""
    if isinstance(err, Overloaded):
        return say("overloaded", lang, limit=f"{err.limit:g}", wall=f"{err.wall:.0f}")
    if isinstance(err, NoProcess):
        return say("no_process", lang)
    return say("zygote_gone_batch" if batch else "zygote_gone", lang, pid=err.pid)


def grade_command(course: Course, ids: list[str], *, submission: Path | None, reference: bool,
                  outputs: list[Output], color: bool | None, lang: str, hidden_visibility: str | None = None,
                  show_hidden: bool = False, show_answers: bool = False, isolation: str | None = None,
                  record=None) -> int:
    """Grade `ids` once and write every report of `outputs` (grader.run.outputs: one format on
    the terminal, or each to its file); the exit code. `record(folder, results)` keeps a
    student's own run (grader.student.progress), never CI's or an instructor's."""
    if reference:
        if not course.solutions_dir.is_dir():
            raise click.UsageError(say("no_reference", lang))
        folder = course.solutions_dir
    else:
        folder = inner_exercises(Path(submission), course) if submission else Path.cwd() / "exercises"
    if not folder.is_dir():
        raise click.UsageError(say("missing_folder", lang, path=folder))
    from grader.run.startup import IsolationRefused
    from grader.sandbox import IsolationUnavailable, choose, is_official

    try:
        tier = choose(official=is_official(submission is not None), requested=isolation)
    except IsolationUnavailable as err:
        raise IsolationRefused(err.text(lang)) from None
    zygote = start_zygote(course, tier, lang=lang)
    try:
        load_judge()
        from grader.report.live import LiveProgress
        from grader.run.session import GradingSession, run_checks

        references, recorded = references_for(course)
        freeze_loaded()
        on_terminal = any(o.to_terminal and o.fmt == "text" for o in outputs)
        with LiveProgress(enabled=None if on_terminal else False, lang=lang) as live:
            session = GradingSession(course, ids, submission=Path(os.path.abspath(folder)), zygote=zygote, references=references,
                                     lang=lang, corpus=corpus_provider(course), public_only=recorded, on_progress=live)
            results = run_checks(session)
    except (ZygoteGone, Overloaded) as err:  # the grader's problem: no result, rather than one charged
        click.echo(gone_text(err, lang), err=True)
        return GRADER_FAULT
    finally:
        zygote.close(wait=False)  # this process exits once the report is out (grader.commands.main)
    written = []
    for output in outputs:
        text = render(results, output.fmt, lang,
                      color=(sys.stdout.isatty() if color is None and output.to_terminal else bool(color)),
                      hidden_note=recorded, picture_dir=None if reference else folder / ".grade",
                      hidden_visibility=hidden_visibility, show_hidden=show_hidden, show_answers=show_answers,
                      files_in="exercises" if submission is None and not reference else str(folder))
        # A path with a byte that is not UTF-8 (a folder named so) reaches the report as a lone
        # surrogate, which no UTF-8 writer takes: shown as "?", so every format stays valid UTF-8.
        written.append((output, text.encode("utf-8", "replace").decode("utf-8")))
    for output, text in written:  # rendered first: a format that fails to render writes none
        if output.to_terminal:
            click.echo(text)
            continue
        from grader.model.files import atomic_write

        try:  # checked before grading (grader.commands.paths.OutputFile); a disk that filled since
            atomic_write(Path(output.path), text + "\n")  # whole or not at all: an earlier result is never cut short
        except OSError as err:  # not 1 (a check failed): the grader could not finish
            click.echo(f"grade: 无法写入 / cannot write {output.path}: {err.strerror or err}", err=True)
            return GRADER_FAULT
    if record is not None and submission is None and not reference and all(o.to_terminal for o in outputs):
        record(folder, results)  # a student's own run; CI and instructors leave no trace
    failed = any(not c.passed and not c.manual for r in results for c in r.checks)
    return 1 if failed or not any(r.checks for r in results) else 0
