"""The instructor's view of the answers: under a failing check, the expected answer and the fix.

A student's report never shows a value the student was asked to work out by hand
(`Finding.answer`: ANSWER_PARAMS, HAND_NLL_LABEL_A, …), a hidden check's expected value, or a
diagnosed mistake's fix (`diagnosis["fix"]`, the last hint level's business). An instructor or
a CI job asks for them with `grade ex03 --show-answers` (text and json); `grade batch`'s
results.json keeps them in its "instructor" part.

They are taken from the full results, before the student's view drops anything, and keyed by
(exercise, check). For an ex03 whose ANSWER_PARAMS counts the tables as tied:

    answers_of(results)[("ex03", "test_answer_params")]
    -> {"answer": "<the count, e.g. 123,456,789 (123.5M)>", "fix": {"zh": "不共享（tied=False）时…", "en": "Untied (tied=False): …"}}
"""

from __future__ import annotations

from grader.model.messages import say
from grader.model.results import CheckResult, ExerciseResult

# Failures with nothing to compare: no answer or fix is shown under them.
_NOTHING_COMPARED = frozenset({"not_implemented", "missing", "import_error", "not_run", "refused", "grader_error"})


def answer_of(check: CheckResult) -> dict | None:
    """`{"answer": …, "fix": {"zh": …, "en": …}}` for a failing check, None when there is nothing to say.

    `answer` is the hand-computed value when there is one, else what the check expected (a
    hidden check's value included); `fix` is the diagnosed mistake's fix, None when no known
    mistake explains the failure.
    """
    f = check.finding
    if check.passed or check.manual or f is None or f.kind in _NOTHING_COMPARED:
        return None
    answer = f.answer if f.answer is not None else f.expected
    fix = (f.diagnosis or {}).get("fix") or None
    if answer is None and fix is None:
        return None
    return {"answer": answer, "fix": dict(fix) if fix else None}


def answers_of(results: list[ExerciseResult]) -> dict[tuple[str, str], dict]:
    """Every failing check's answer and fix, keyed by (exercise id, check name)."""
    out = {}
    for result in results:
        for check in result.checks:
            found = answer_of(check)
            if found is not None:
                out[(result.exercise.id, check.name)] = found
    return out


def fix_text(found: dict | None, lang: str) -> str | None:
    fix = (found or {}).get("fix")
    return (fix.get("en") if lang == "en" else fix.get("zh")) if fix else None


def answer_lines(found: dict | None, lang: str, *, shown_expected: str | None = None) -> list[str]:
    """The lines under a failing check: the answer (unless the check's line already shows it as
    the expected value) and the fix.

    >>> answer_lines({"answer": "123,456,789 (123.5M)", "fix": None}, "en", shown_expected="?")
    ['answer (instructors): 123,456,789 (123.5M)']
    """
    if not found:
        return []
    lines = []
    if found.get("answer") is not None and found["answer"] != shown_expected:
        lines.append(say("answer_line", lang, answer=found["answer"]))
    fix = fix_text(found, lang)
    if fix:
        lines.append(say("fix_line", lang, fix=fix))
    return lines


def answer_fields(found: dict | None, lang: str) -> dict:
    """The json fields of a check with `--show-answers`: `answer` and `fix` (in the report's language)."""
    return {"answer": (found or {}).get("answer"), "fix": fix_text(found, lang)}
