"""Gradescope's autograder `results.json`, as its specification describes it.

Top level: `score`, `max_score`, `execution_time` (seconds), `output` (a line per exercise),
`output_format`/`test_output_format` ("text"), `visibility`, `stdout_visibility` ("hidden":
the worker's output never reaches a student through the autograder log), `tests`.
Per test: `name` ("ex09 forward：…"), `number` ("ex09.02": zero-padded so that ex09.10 sorts
after ex09.2, in course order), `score`, `max_score`, `status` ("passed"/"failed"), `output`,
`visibility`: public checks "visible", hidden ones `hidden_visibility` — "after_published"
(the default: students see them once grades are published) or "hidden" (never), the
instructor's choice (`grade gradescope --hidden-visibility`). A manually graded check
(ex04's WHY_PARALLEL) is not an autograder test: it is a separate question on Gradescope.
"""

from __future__ import annotations

import json

from grader.model.results import ExerciseResult
from grader.report.details import automatic_checks, check_numbers, failure_text
from grader.report.review import reasons_of, reasons_text

HIDDEN_VISIBILITY = "after_published"
HIDDEN_CHOICES = ("after_published", "hidden")


def gradescope_dict(results: list[ExerciseResult], lang: str = "zh", *,
                    hidden_visibility: str = HIDDEN_VISIBILITY) -> dict:
    """The results.json object.

    Example: ex01 with a passing public check (1 point) and a failed hidden one (3) ->
    {"score": 1, "max_score": 4, "tests": [{"number": "ex01.01", "status": "passed", …},
    {"number": "ex01.02", "visibility": "after_published", "status": "failed", …}], …}
    """
    if hidden_visibility not in HIDDEN_CHOICES:
        raise ValueError(f"hidden_visibility must be one of {HIDDEN_CHOICES}, not {hidden_visibility!r}")
    numbers = check_numbers(results)
    tests = []
    for ex, check in automatic_checks(results):
        tests.append({
            "name": f"{ex.id} {check.title(lang)}",
            "number": numbers[(ex.id, check.name)],
            "score": check.points,
            "max_score": check.max_points,
            "status": "passed" if check.passed else "failed",
            "output": "" if check.passed else failure_text(check, lang),
            "output_format": "text",
            "visibility": "visible" if check.public else hidden_visibility,
        })
    lines = [f"{r.exercise.id}  {r.exercise.title(lang)}: {r.score}/{r.max_score}" for r in results]
    if reasons_of(results):
        lines.insert(0, "⚑ " + reasons_text(reasons_of(results), lang))
    return {
        "score": sum(r.score for r in results),
        "max_score": sum(r.max_score for r in results),
        "execution_time": round(sum(c.seconds for r in results for c in r.checks), 3),
        "output": "\n".join(lines),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def render_gradescope(results: list[ExerciseResult], lang: str = "zh", *,
                      hidden_visibility: str = HIDDEN_VISIBILITY) -> str:
    return json.dumps(gradescope_dict(results, lang, hidden_visibility=hidden_visibility),
                      ensure_ascii=False, indent=2)
