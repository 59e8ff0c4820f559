"""One entry for every output format: text, json and the CI formats.

Rendering imports neither torch nor the sandbox: it reads `ExerciseResult`s only.
"""

from __future__ import annotations

from pathlib import Path

FORMATS = ("text", "json", "junit", "gradescope", "github")


def render(results, fmt: str, lang: str, *, color: bool = False, hidden_note: bool = False,
           picture_dir: Path | None = None) -> str:
    if fmt == "json":
        from grader.report.json_report import render_json

        return render_json(results, lang)
    if fmt == "text":
        from grader.report.text import render_text

        return render_text(results, lang, color=color, hidden_note=hidden_note, picture_dir=picture_dir)
    from grader.report import ci_formats

    return ci_formats.render(fmt, results, lang)
