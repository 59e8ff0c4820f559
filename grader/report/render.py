"""One entry for every output format: text, json and the CI formats.

Each format has its module (text, json_report, junit, gradescope, classroom, github), imported
only when it is used. Rendering imports neither torch nor the sandbox: it reads
`ExerciseResult`s only. `options` are per format: `hidden_visibility` for gradescope.
"""

from __future__ import annotations

from pathlib import Path

FORMATS = ("text", "json", "junit", "gradescope", "github", "classroom")
ANSWER_FORMATS = ("text", "json")  # the formats `--show-answers` adds answers and fixes to


def render(results, fmt: str, lang: str, *, color: bool = False, hidden_note: bool = False,
           picture_dir: Path | None = None, hidden_visibility: str | None = None, show_hidden: bool = False,
           show_answers: bool = False, files_in: str = "exercises") -> str:
    """The report in `fmt`. Example: render(results, "junit", "en") -> '<?xml …<testsuites …'.

    Every format shows hidden checks in the student's view (grader.report.student_view)
    unless `show_hidden` (an instructor's `--show-hidden`): then the text and CI formats
    show everything, and json adds the full details apart, under "instructor".
    `show_answers` (an instructor's `--show-answers`, text and json only) adds under each
    failing check the expected answer and the diagnosed mistake's fix (grader.report.answers),
    which a student's report never shows. `files_in` is the folder the text report names a
    missing or unfinished exercise file in (`exercises`, or the `--submission` folder)."""
    answers = None
    if show_answers:
        if fmt not in ANSWER_FORMATS:
            raise ValueError(f"show_answers works with {', '.join(ANSWER_FORMATS)}, not {fmt!r}")
        from grader.report.answers import answers_of

        answers = answers_of(results)  # from the full results, before the student's view
    if fmt == "json":
        from grader.report.json_report import render_json

        return render_json(results, lang, instructor=show_hidden, answers=answers)
    if not show_hidden:
        from grader.report.student_view import for_student

        results = for_student(results)
    if fmt == "text":
        from grader.report.text import render_text

        return render_text(results, lang, color=color, hidden_note=hidden_note, picture_dir=picture_dir,
                           answers=answers, files_in=files_in)
    if fmt == "junit":
        from grader.report.junit import render_junit

        return render_junit(results, lang)
    if fmt == "gradescope":
        from grader.report.gradescope import HIDDEN_VISIBILITY, render_gradescope

        return render_gradescope(results, lang, hidden_visibility=hidden_visibility or HIDDEN_VISIBILITY)
    if fmt == "classroom":
        from grader.report.classroom import render_classroom

        return render_classroom(results, lang)
    if fmt == "github":
        from grader.report.github import render_github

        return render_github(results, lang)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
