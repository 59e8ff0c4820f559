"""`grade exNN` / `grade all`: from options to an exit code.

The zygote is forked first, before torch, the reference solutions or the checks are loaded
here, so workers forked from it hold none of them; torch loads in both processes at once.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from grader.course import Course
from grader.messages import say


def start_zygote(course: Course | None = None):
    """Fork the zygote; workers may read the course's data folder (course.toml [data] dir)."""
    from grader.sandbox import Zygote

    grants = [str(course.root / course.data_dir)] if course is not None and course.data_dir else []
    return Zygote(fence={"grants": grants} if grants else None).start()


def corpus_provider(course: Course):
    """A function giving the corpus path, resolved once, on first use by a check."""
    cached: dict[str, object] = {}

    def corpus() -> str:
        from grader.judge import CheckFailed, Finding

        if "error" in cached:  # said in full once, above; a short line for the other checks
            raise CheckFailed(Finding("data", "tiny Shakespeare", zh="数据不可用（怎么获取见上文）",
                                      en="the data is not available (how to get it: see above)"))
        if "path" not in cached:
            from grader import datasets

            from grader.subjects import DataFile

            try:
                data_dir = course.root / course.data_dir if course.data_dir else None
                path = datasets.resolve("tinyshakespeare", data_dir=data_dir, progress=None)
            except datasets.DataError as err:
                cached["error"] = err
                raise CheckFailed(Finding("data", "tiny Shakespeare", zh=err.zh, en=err.en)) from None
            # resolve() verified the file's sha256 against the catalog.
            cached["path"] = DataFile("tinyshakespeare", str(path), datasets.get_dataset("tinyshakespeare").sha256)
        return cached["path"]

    return corpus


def references_for(course: Course):
    """Live references from solutions/, or the answers recorded in a student release."""
    if course.solutions_dir.is_dir():
        from grader.runner import LiveReferences

        return LiveReferences(course), False
    from grader.recorded import RecordedReferences

    return RecordedReferences(course), True


def grade_command(course: Course, ids: list[str], *, submission: Path | None, reference: bool, fmt: str,
                  out: Path | None, color: bool | None, lang: str) -> int:
    if reference:
        if not course.solutions_dir.is_dir():
            raise click.UsageError(say("no_reference", lang))
        folder = course.solutions_dir
    else:
        folder = Path(submission) if submission else Path.cwd() / "exercises"
    if not folder.is_dir():
        raise click.UsageError(say("missing_folder", lang, path=folder))
    zygote = start_zygote(course)
    try:
        import torch

        torch.set_num_threads(1)
        from grader.runner import GradingSession, run_checks

        from grader.live import LiveProgress

        references, recorded = references_for(course)
        gc.freeze()  # what is loaded now lives until exit: spare pytest's full collections the scan
        with LiveProgress(enabled=None if fmt == "text" else False, lang=lang) as live:
            session = GradingSession(course, ids, submission=folder.resolve(), zygote=zygote, references=references,
                                     lang=lang, corpus=corpus_provider(course), public_only=recorded, on_progress=live)
            results = run_checks(session)
    finally:
        zygote.close()
    text = render(results, fmt, lang, color=(sys.stdout.isatty() if color is None and out is None else bool(color)),
                  hidden_note=recorded, picture_dir=None if reference else folder / ".grade")
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    else:
        click.echo(text)
    if submission is None and not reference and out is None:
        remember_attempt(folder, results)  # a student's own run; CI and instructors leave no trace
    failed = any(not c.passed and not c.manual for r in results for c in r.checks)
    return 1 if failed or not any(r.checks for r in results) else 0


def remember_attempt(folder: Path, results) -> None:
    """Keep the student's progress (grade status) in their folder."""
    from grader.progress import record_attempt

    record_attempt(folder, results)


def render(results, fmt: str, lang: str, *, color: bool = False, hidden_note: bool = False,
           picture_dir: Path | None = None) -> str:
    from grader import report

    if fmt == "json":
        return report.render_json(results, lang)
    if fmt == "text":
        return report.render_text(results, lang, color=color, hidden_note=hidden_note, picture_dir=picture_dir)
    from grader import ci_formats

    return ci_formats.render(fmt, results, lang)
