"""What the worker's guard and the judge's scan say about a submission, applied to its results.

- **Tampered** (`grader.sandbox.guard` saw a refused tool or a changed observer while the
  exercise's code ran): every check of that exercise fails with a message naming what was
  changed, so the exercise scores 0. The answers of a worker whose observers were changed
  cannot be trusted, whichever check they came from.
- **Review** (`grader.judge.scan` found what only a tamperer needs in the exercise's file):
  the reasons are attached to the exercise (`ExerciseResult.review`) and every report format
  shows them; the points stand.

>>> from grader.model.course import Exercise, Text
>>> from grader.model.results import CheckResult, ExerciseResult
>>> ex = Exercise.__new__(Exercise); object.__setattr__(ex, "id", "ex02")
>>> r = ExerciseResult(ex, [CheckResult("ex02", "test_a", Text("a", "a"), 3, True)])
>>> out = apply_integrity([r], {"ex02": ["changed: grader.probes.common.call_function"]}, {})
>>> out[0].score, out[0].checks[0].finding.kind
(0, 'tampered')
"""

from __future__ import annotations

from grader.model.results import ExerciseResult, Finding


def tampered_finding(what: list[str]) -> Finding:
    listed = "; ".join(what[:6]) + (" …" if len(what) > 6 else "")
    return Finding(
        "tampered", "guard",
        zh=f"评分进程的观察器被改动或被触碰，本练习记 0 分：{listed}",
        en=f"the grader's observers were changed or reached for, so this exercise scores 0: {listed}")


def apply_integrity(results: list[ExerciseResult], tampered: dict[str, list[str]],
                    reviews: dict[str, list[str]]) -> list[ExerciseResult]:
    """Fail every check of a tampered exercise; attach review reasons. Returns `results`."""
    for result in results:
        exercise_id = result.exercise.id
        what = list(tampered.get(exercise_id) or [])
        if what:
            finding = tampered_finding(what)
            for check in result.checks:
                check.passed = False
                check.finding = finding
        if reviews.get(exercise_id):
            result.review = list(reviews[exercise_id])
    return results


def review_of(results: list[ExerciseResult]) -> list[str]:
    """Every review reason of a submission, in course order (for a submission-wide mark)."""
    return [reason for r in results for reason in getattr(r, "review", [])]


__all__ = ["apply_integrity", "tampered_finding", "review_of"]
