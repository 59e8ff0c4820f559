"""Markdown for a GitHub Actions job summary (`$GITHUB_STEP_SUMMARY`).

A table of exercises (mark, id, title, score), then the failed checks with what was expected
against what came back. Cells are escaped so that a title cannot break the table.
"""

from __future__ import annotations

from grader.model.results import ExerciseResult
from grader.report.review import reasons_of, reasons_text
from grader.report.text import check_message


def _md(text) -> str:
    """A table cell: no pipes or newlines, no HTML. Example: "a|b" -> "a\\|b"."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
            .replace("<", "&lt;").replace(">", "&gt;"))


def render_github(results: list[ExerciseResult], lang: str = "zh") -> str:
    en = lang == "en"
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    lines = [f"## {'Grade' if en else '评分'}: {score}/{max_score}", ""]
    reasons = reasons_of(results)
    if reasons:
        lines += [f"> ⚑ **{_md(reasons_text(reasons, lang))}**", ""]
    lines += ["| | " + (" | ".join(["exercise", "title", "score"]) if en else "练习 | 标题 | 得分") + " |",
              "|---|---|---|---|"]
    for r in results:
        mark = "✅" if r.status == "passed" else ("⬜" if r.status in ("not_implemented", "empty") else "❌")
        lines.append(f"| {mark} | {r.exercise.id} | {_md(r.exercise.title(lang))} | {r.score}/{r.max_score} |")
    failed = [(r.exercise, c) for r in results for c in r.checks if not c.passed and not c.manual]
    if failed:
        lines += ["", f"### {'Failed checks' if en else '未通过的检查'}", ""]
        for ex, check in failed:
            lines.append(f"- **{ex.id}** {_md(check.title(lang))}: {_md(check_message(check, lang))}")
    return "\n".join(lines) + "\n"
