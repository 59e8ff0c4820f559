"""Gradescope's autograder `results.json`, as its specification describes it.

Top level: `score`, `max_score`, `execution_time` (seconds), `output` (a line per exercise),
`output_format`/`test_output_format` ("text"), `visibility`, `stdout_visibility` ("hidden":
the worker's output never reaches a student through the autograder log), `tests`.
Per test: `name` ("ex09 forward：…"), `number` ("ex09.02": zero-padded so that ex09.10 sorts
after ex09.2, in course order), `score`, `max_score`, `status` ("passed"/"failed"), `output`,
`visibility`: public checks "visible", hidden ones `hidden_visibility` — "after_published"
(the default: students see them once grades are published) or "after_due_date", the
instructor's choice (`grade gradescope --hidden-visibility`). Gradescope's "hidden" is not
offered: such a test is never shown, and while one is hidden students cannot see their total
(Gradescope's specification), so it suits tests without points only, and every automatic
check here carries points. A manually graded check (ex04's WHY_PARALLEL) is not an autograder test:
it is a separate question on Gradescope.

The top-level `output` is always visible, so it holds nothing a hidden check decided before
the hidden tests are shown: per exercise the public checks' score, and how many points the
hidden checks carry and when they are shown; never a total or an exercise's score that
includes them (`score` is Gradescope's to show once the tests are).

    >>> print(gradescope_dict(results, "en")["output"])  # 1 of 4 public points, 7 hidden ones
    ex01  Windows: public checks 1/4; hidden checks (7 points) shown once grades are published
"""

from __future__ import annotations

import json

from grader.model.messages import say
from grader.model.results import ExerciseResult
from grader.report.details import automatic_checks, check_numbers, failure_text
from grader.report.review import reasons_of, reasons_text

HIDDEN_VISIBILITY = "after_published"
HIDDEN_CHOICES = ("after_published", "after_due_date")  # Gradescope's "hidden": tests without points only


def gradescope_dict(results: list[ExerciseResult], lang: str = "zh", *,
                    hidden_visibility: str = HIDDEN_VISIBILITY) -> dict:
    """The results.json object.

    Example: ex01 with a passing public check (1 point) and a failed hidden one (3) ->
    {"score": 1, "max_score": 4, "tests": [{"number": "ex01.01", "status": "passed", …},
    {"number": "ex01.02", "visibility": "after_published", "status": "failed", …}], …}
    """
    if hidden_visibility not in HIDDEN_CHOICES:
        raise ValueError(say("gradescope_visibility", "en", choices=", ".join(HIDDEN_CHOICES), value=hidden_visibility))
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
    lines = [summary_line(r, lang, hidden_visibility) for r in results]
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


def summary_line(result: ExerciseResult, lang: str, hidden_visibility: str = HIDDEN_VISIBILITY) -> str:
    """One exercise in the always-visible summary: its public checks' score and, when it has
    hidden checks, their points and when they are shown (not what they gave).

    Example (en): "ex03  parameter budget: public checks 2/3; hidden checks (5 points) shown
    after the due date"; an exercise with public checks only: "ex07  split: 4/4".
    """
    checks = [c for c in result.checks if not c.manual]
    public = [c for c in checks if c.public]
    hidden = sum(c.max_points for c in checks if not c.public)
    head = f"{result.exercise.id}  {result.exercise.title(lang)}"
    score, most = sum(c.points for c in public), sum(c.max_points for c in public)
    if not hidden:
        return f"{head}: {score}/{most}"
    return f"{head}: " + say("gradescope_exercise", lang, score=score, max=most, hidden=hidden,
                             when=say(f"gradescope_{hidden_visibility}", lang))


def render_gradescope(results: list[ExerciseResult], lang: str = "zh", *,
                      hidden_visibility: str = HIDDEN_VISIBILITY) -> str:
    return json.dumps(gradescope_dict(results, lang, hidden_visibility=hidden_visibility),
                      ensure_ascii=False, indent=2)
