"""Render grading results: text for people (zh/en), json for programs.

The text report is one line per check: pass or fail, the check's name, expected against
got (shapes first for tensors), and under a failure why, the known mistake it matches and
the section to reread, the student's own traceback frames and printed output.
"""

from __future__ import annotations


from grader.model.messages import say, section_text
from grader.model.results import CheckResult, ExerciseResult, Finding
from grader.report.layout import pad, width

NAME_WIDTH = 34
VALUE_WIDTH = 22


def check_message(check: CheckResult, lang: str) -> str:
    """One paragraph saying why a check failed (empty when it passed)."""
    f = check.finding
    if check.manual:
        return say("manual_pending" if check.passed else "manual_missing", lang)
    if check.passed or f is None:
        return ""
    parts = []
    values = _values(f, lang)
    if values:
        parts.append(values)
    reason = f.en if lang == "en" else f.zh
    if reason:
        parts.append(reason)
    if f.diagnosis:
        d = f.diagnosis
        parts.append(f"{say('diagnosis', lang)}: {d['en'] if lang == 'en' else d['zh']} "
                     f"({say('reread', lang, section=section_text(d['section'], lang))})")
    return "; ".join(parts)


def render_text(results: list[ExerciseResult], lang: str = "zh", *, color: bool = False, hidden_note: bool = False,
                picture_dir=None, answers: dict | None = None, files_in: str = "exercises") -> str:
    """The report for people. Checks' attachments are drawn under them (grader.report.pictures);
    pictures saved as files (ex12's loss curve) go to `picture_dir` when it is given.

    `answers` (an instructor's `--show-answers`: grader.report.answers.answers_of) puts the
    expected answer and the fix under each failing check; a student's report has none.
    `files_in` is the folder a missing or unfinished exercise file is named in."""
    style = _styler(color)
    lines: list[str] = []
    for result in results:
        ex = result.exercise
        header = f"{ex.id}  {ex.title(lang)}"
        lines.append(style(pad(header, 66) + f"{result.score}/{result.max_score}", bold=True))
        if result.review:
            from grader.report.review import reasons_text

            lines.append("  ⚑ " + reasons_text(result.review, lang, limit=6))
        if result.status == "not_implemented":
            gone = say("file_missing", "en", name=ex.file)  # every check: the file itself is not there
            key = "file_missing_line" if all(c.finding.en == gone for c in result.checks if not c.manual) \
                else "not_implemented_line"
            lines.append("  " + say(key, lang, file=f"{files_in}/{ex.file}", id=ex.id))
            continue
        from grader.report.failure import import_block, import_failure

        stopped = import_failure(result.checks)
        if stopped:  # the file does not import: said once, the checks it stopped in one line
            lines.extend(import_block(stopped, ex.file, lang, style))
        stopped_ids = {id(c) for c in stopped}
        shown_tracebacks: set[str] = set()
        explained: set[str] = set()  # the diagnoses said in full above, in this exercise
        for check in result.checks:
            if id(check) in stopped_ids:
                continue
            found = answers.get((ex.id, check.name)) if answers else None
            lines.extend(_check_lines(check, ex.id, lang, style, seen=shown_tracebacks, answer=found,
                                      explained=explained))
            if check.attachments:
                from grader.report.pictures import pictures_for

                lines.extend("      " + l for l in pictures_for(check, lang, style=style, picture_dir=picture_dir))
    total = sum(r.score for r in results)
    possible = sum(r.max_score for r in results)
    if len(results) > 1:
        lines.append(style(pad(say("total", lang), 66) + f"{total}/{possible}", bold=True))
    failed = sum(1 for r in results for c in r.checks if not c.passed and not c.manual)
    lines.append(say("all_passed", lang) if failed == 0 else say("some_failed", lang, failed=failed))
    unanswered = sum(1 for r in results for c in r.checks if c.manual and not c.passed)
    if unanswered:
        lines.append(say("manual_unanswered", lang, count=unanswered))
    if hidden_note:
        lines.append(say("hidden_note", lang))
        if any(r.exercise.pieces for r in results):  # a release (its answers recorded): no correct pieces
            lines.append(say("own_pieces_note", lang))  # the student release: no correct pieces
    return "\n".join(lines)


def _values(f, lang: str, *, padded: bool = False) -> str:
    """`expected X, got Y`, each side only when the check has it: a call that raised before any
    answer was compared (`assert_ok`) has no expected value, and says only what came back.

    >>> _values(Finding("error", got="raised ValueError"), "en")
    'got raised ValueError'
    """
    expected = f"{say('expected', lang)} {f.expected}" if f.expected is not None else ""
    got = f"{say('got', lang)} {f.got}" if f.got is not None else ""
    if padded and expected and got:
        return f"{say('expected', lang)} {pad(str(f.expected), VALUE_WIDTH)}{got}"
    return (" " if padded else ", ").join(part for part in (expected, got) if part)


def _head(mark: str, title: str, values: str) -> list[str]:
    """The check's line: name, then expected against got (on the next line if the name is long)."""
    if width(title) >= NAME_WIDTH:
        return [f"  {mark} {title}", f"    {' ' * NAME_WIDTH}{values}"]
    return [f"  {mark} {pad(title, NAME_WIDTH)}{values}"]


def diagnosis_lines(d: dict, exercise_id: str, lang: str, style, explained: set | None = None) -> list[str]:
    """A diagnosis, its reread line and its hint level; said once per exercise: `explained`
    holds the ids said in full above, and a check that shares one says so in a word.

    >>> d = {"id": "x", "zh": "差一", "en": "Off by one", "section": "5.2", "hint": 2}
    >>> seen = set()
    >>> diagnosis_lines(d, "ex01", "en", lambda t, **_: t, seen)
    ['diagnosis: Off by one', 'reread section 5.2  hint: grade hint ex01 --level 2']
    >>> diagnosis_lines(d, "ex01", "en", lambda t, **_: t, seen)
    ['diagnosis: the same as above']
    """
    if explained is not None:
        if d["id"] in explained:
            return [style(f"{say('diagnosis', lang)}: {say('same_diagnosis', lang)}", fg="yellow")]
        explained.add(d["id"])
    text = d["en"] if lang == "en" else d["zh"]
    extra = say("reread", lang, section=section_text(d["section"], lang))
    if d.get("hint"):
        extra += "  " + say("see_hint", lang, id=exercise_id, level=d["hint"])
    return [style(f"{say('diagnosis', lang)}: {text}", fg="yellow"), extra]


def _check_lines(check: CheckResult, exercise_id: str, lang: str, style, seen: set | None = None,
                 answer: dict | None = None, explained: set | None = None) -> list[str]:
    title = check.title(lang)
    if check.manual:
        mark = "…"
        text = say("manual_pending" if check.passed else "manual_missing", lang)
        return [f"  {mark} {pad(title, NAME_WIDTH)}{text}"]
    mark = style("✓", fg="green") if check.passed else style("✗", fg="red")
    f = check.finding
    if check.passed:  # one short line: what was right needs no expected-against-got
        return [f"  {mark} {title}"]
    if f.kind in ("not_implemented", "missing", "not_run"):
        reason = f.en if lang == "en" else f.zh
        return [f"  {mark} {pad(title, NAME_WIDTH)}{reason}"]
    values = _values(f, lang, padded=True)
    if values:
        lines = _head(mark, title, values)
    else:
        lines = [f"  {mark} {title}"]
    reason = f.en if lang == "en" else f.zh
    if f.label and f.kind not in ("custom", "rule"):  # their own words say what they are about
        reason = f"{f.label}: {reason}" if reason else f.label
    if reason:
        lines.extend("      " + line for line in reason.splitlines())
    if f.diagnosis:
        lines.extend("      " + line for line in diagnosis_lines(f.diagnosis, exercise_id, lang, style, explained))
    if answer:
        from grader.report.answers import answer_lines

        lines.extend("      " + style(line, fg="cyan") for line in answer_lines(answer, lang, shown_expected=f.expected))
    from grader.report.failure import output_lines, where_lines

    if f.kind != "grader_error":
        lines.extend(where_lines(f.kind, f.traceback, lang, seen))
    lines.extend(output_lines(f.output, lang))
    return lines


def _styler(color: bool):
    if not color:
        return lambda text, **_: text
    import click

    return lambda text, **kw: click.style(text, **kw)


