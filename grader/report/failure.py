"""The lines under a failed check, and the one block for a file that does not import.

- a file that does not import (a syntax error, a NameError at module level, a loop that
  never ends at import) is said once per exercise, with the student's line and a caret;
  the checks that could not run because of it are one line; so is a file that was not read
  (a link, a FIFO, over a cap), or a submission refused whole;
- where the student's code was (a time-out, a crash) or its own traceback frames;
- what it printed: at most `OUTPUT_LINES` lines, then "… N more lines", and when the
  worker kept only the start of a flood, how much was printed in all.

Example (ex01 with `windows = [` left open):

    ✗ ex01_windows.py does not import, so none of this exercise's checks could run:
        SyntaxError: '[' was never closed
          File "ex01_windows.py", line 52
            windows = [
                      ^
    ✗ 8 check(s) could not run (see the error above): shift_pairs: the example of 5.2, …
"""

from __future__ import annotations

from grader.model.messages import say
from grader.model.results import CheckResult
from grader.report.layout import width

OUTPUT_LINES = 8
INDENT = "      "


def import_failure(checks: list[CheckResult]) -> list[CheckResult]:
    """The checks that could not run because the exercise's file does not import, or was not
    read at all (a link, a FIFO, over a cap: grader.sandbox.intake)."""
    for kind in ("import_error", "refused"):
        stopped = [c for c in checks if not c.passed and c.finding is not None and c.finding.kind == kind]
        if stopped:
            return stopped
    return []


def import_block(failed: list[CheckResult], file: str, lang: str, style, line_width: int = 78) -> list[str]:
    """The import error (or why the file was not read) once, then one line for the checks it stopped."""
    f = failed[0].finding
    mark = style("✗", fg="red")
    if f.kind == "refused":
        lines = [f"  {mark} {f.en if lang == 'en' else f.zh}"]
    else:
        reason = (f.en if lang == "en" else f.zh).removeprefix(say("import_prefix", lang))
        lines = [f"  {mark} {say('import_failed', lang, file=file)}", *(INDENT + line for line in reason.splitlines())]
    lines.extend(INDENT + line for line in f.traceback.splitlines())
    lines.extend(output_lines(f.output, lang))
    names = ", ".join(c.title(lang) for c in failed)
    summary = say("could_not_run", lang, count=len(failed), names=names)
    lines.append(f"  {mark} " + _cut(summary, line_width))
    return lines


def _cut(text: str, limit: int) -> str:
    if width(text) <= limit:
        return text
    out, used = [], 0
    for ch in text:
        used += width(ch)
        if used > limit - 1:
            break
        out.append(ch)
    return "".join(out) + "…"


def where_lines(kind: str, traceback: str, lang: str, seen: set | None = None) -> list[str]:
    """The student's frames, under "your code was here" (a time-out, a crash) or "your traceback".

    `seen` holds the tracebacks already shown for this exercise: the same one again is a line.
    """
    if not traceback:
        return []
    head = say("your_code_was" if kind in ("timeout", "crash") else "your_traceback", lang)
    if seen is not None:
        if traceback in seen:
            return [INDENT + head + " " + say("same_as_above", lang)]
        seen.add(traceback)
    return [INDENT + head] + [INDENT + line for line in traceback.splitlines()]


def output_lines(output: str, lang: str) -> list[str]:
    """What the student's code printed: the first lines, and how much more there was. Over the
    kit's cap the head says how much was printed in all and how many lines are shown here.

    >>> from grader.model.calls import Printed
    >>> print(output_lines(Printed.of("0\\n1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n", (6_888_890, 1_000_000)), "en")[0])
          your code printed 6.9 MB (1,000,000 lines), over the kit's limit; its first 8 lines:
    """
    if not output:
        return []
    total = getattr(output, "total", None)
    shown = output.splitlines()
    kept = min(len(shown), OUTPUT_LINES)
    if total is not None:
        from grader.report.humanize import nbytes_short

        chars, all_lines = total
        head = say("your_output_cut", lang, size=nbytes_short(chars), lines=f"{all_lines:,}", kept=f"{kept:,}")
    else:
        all_lines = len(shown)
        head = say("your_output", lang)
    lines = [INDENT + head] + [INDENT + "| " + line for line in shown[:OUTPUT_LINES]]
    more = all_lines - kept
    if more > 0:
        lines.append(INDENT + say("more_lines", lang, count=f"{more:,}"))
    return lines
