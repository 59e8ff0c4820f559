"""The json report: the object docs/GRADER.md pins (`score`, `max_score`, `exercises[].checks[]`).

What a student may read is the object itself: every hidden check in its student's view
(`grader.report.student_view`: pass or fail, shapes, diagnosis; no inputs, expected values,
exception messages or output). With `instructor=True` (`grade batch`'s results.json, or
`grade … --format json --show-hidden`) the full details sit apart, under `"instructor"`:

    {"score": 41, "max_score": 46, "exercises": [...student view...],
     "instructor": {"exercises": [{"id": "ex02", "checks": [{"name": "test_…", "label":
      "masked(…inputs…)", "expected": "1.2345", "got": "1.3", "message": "…", "traceback": "…",
      "output": "…", "answer": null, "diagnosis": "sum_not_mean", "fix": {"zh": "…", "en": "…"}}]}]}}

With `answers` (an instructor's `--show-answers`, grader.report.answers) each check of the
top part also gets `"answer"` (the hand-computed or expected value) and `"fix"` (the diagnosed
mistake's fix, in the report's language); without it, those keys are not there at all.
"""

from __future__ import annotations

import json

from grader.model.results import ExerciseResult
from grader.report.review import review_dict
from grader.report.student_view import for_student
from grader.report.text import check_message



def as_json_dict(results: list[ExerciseResult], lang: str = "zh", *, instructor: bool = False,
                 answers: dict | None = None) -> dict:
    """The `--format json` object pinned in docs/GRADER.md (plus a few extra fields), in the
    student's view; with `instructor`, the full details too, apart; with `answers`, each
    failing check's answer and fix (see the module)."""
    full = results
    results = for_student(results)
    exercises = []
    for result in results:
        checks = [{
            "name": c.name, "title": c.title(lang), "passed": c.passed, "score": c.points, "max_score": c.max_points,
            "message": check_message(c, lang), "public": c.public, "manual": c.manual,
            "kind": c.finding.kind if c.finding else None,
            "diagnosis": c.finding.diagnosis["id"] if c.finding and c.finding.diagnosis else None,
        } for c in result.checks]
        if answers is not None:
            from grader.report.answers import answer_fields

            for entry in checks:
                entry.update(answer_fields(answers.get((result.exercise.id, entry["name"])), lang))
        exercises.append({"id": result.exercise.id, "title": result.exercise.title(lang), "status": result.status,
                          "score": result.score, "max_score": result.max_score, "checks": checks,
                          "review": list(result.review)})
    book = {"score": sum(e["score"] for e in exercises), "max_score": sum(e["max_score"] for e in exercises),
            "review": review_dict(results), "exercises": exercises}
    if instructor:
        book["instructor"] = instructor_view(full, lang)
    return book


def instructor_view(results: list[ExerciseResult], lang: str = "zh") -> dict:
    """Every check's full details: the call with its inputs, expected and got, the message,
    the student's traceback and output, a hand-computed answer. For instructors only."""
    return {"exercises": [{"id": r.exercise.id, "checks": [{
        "name": c.name, "public": c.public, "message": check_message(c, lang),
        "label": c.finding.label if c.finding else (c.shown[-1][0] if c.shown else None),
        "expected": c.finding.expected if c.finding else (c.shown[-1][1] if c.shown else None),
        "got": c.finding.got if c.finding else (c.shown[-1][2] if c.shown else None),
        "traceback": c.finding.traceback if c.finding else "", "output": c.finding.output if c.finding else "",
        "answer": c.finding.answer if c.finding else None,
        "diagnosis": c.finding.diagnosis["id"] if c.finding and c.finding.diagnosis else None,
        "fix": _fix(c),
        "calls": [entry[0] for entry in c.shown],  # every passed call, with its inputs
    } for c in r.checks]} for r in results]}


def _fix(check) -> dict | None:
    """The diagnosed mistake's fix, both languages (never in the student's part)."""
    fix = (check.finding.diagnosis or {}).get("fix") if check.finding else None
    return dict(fix) if fix else None


def render_json(results: list[ExerciseResult], lang: str = "zh", *, instructor: bool = False,
                answers: dict | None = None) -> str:
    return json.dumps(as_json_dict(results, lang, instructor=instructor, answers=answers), ensure_ascii=False, indent=2)
