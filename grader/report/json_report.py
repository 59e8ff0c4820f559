"""The json report: the object docs/GRADER.md pins (`score`, `max_score`, `exercises[].checks[]`)."""

from __future__ import annotations

import json

from grader.model.results import ExerciseResult
from grader.report.text import check_message



def as_json_dict(results: list[ExerciseResult], lang: str = "zh") -> dict:
    """The `--format json` object pinned in docs/GRADER.md (plus a few extra fields)."""
    exercises = []
    for result in results:
        checks = [{
            "name": c.name, "title": c.title(lang), "passed": c.passed, "score": c.points, "max_score": c.max_points,
            "message": check_message(c, lang), "public": c.public, "manual": c.manual,
            "kind": c.finding.kind if c.finding else None,
            "diagnosis": c.finding.diagnosis["id"] if c.finding and c.finding.diagnosis else None,
        } for c in result.checks]
        exercises.append({"id": result.exercise.id, "title": result.exercise.title(lang), "status": result.status,
                          "score": result.score, "max_score": result.max_score, "checks": checks})
    return {"score": sum(e["score"] for e in exercises), "max_score": sum(e["max_score"] for e in exercises),
            "exercises": exercises}


def render_json(results: list[ExerciseResult], lang: str = "zh") -> str:
    return json.dumps(as_json_dict(results, lang), ensure_ascii=False, indent=2)
