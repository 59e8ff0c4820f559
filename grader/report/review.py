"""The review mark: a submission whose files reach for the grader's internals or tampering tools.

`grader.judge.scan` finds the reasons (in the judge, from the syntax tree, before anything
runs); `ExerciseResult.review` carries them; every format shows them through these helpers:
the text report, results.json, grades.csv's `review` column, junit (a `review` property and
the suite's system-out), Gradescope (the top-level output), GitHub's summary, Classroom.

>>> reasons_text(["ex02_nll.py:3: imports gc"], "en")
'flagged for review: ex02_nll.py:3: imports gc'
"""

from __future__ import annotations

from grader.model.results import ExerciseResult

LABEL = {"zh": "需要人工复核", "en": "flagged for review"}


def reasons_of(results: list[ExerciseResult]) -> list[str]:
    """Every reason of a submission, in course order."""
    return [reason for r in results for reason in getattr(r, "review", None) or []]


def reasons_text(reasons: list[str], lang: str = "zh", limit: int = 12) -> str:
    """One line: the mark and its reasons (the first `limit`)."""
    shown = "; ".join(reasons[:limit]) + (f"; … (+{len(reasons) - limit})" if len(reasons) > limit else "")
    return f"{LABEL['en' if lang == 'en' else 'zh']}: {shown}"


def review_dict(results: list[ExerciseResult]) -> dict:
    """For json: `{"flagged": bool, "reasons": [...]}`."""
    reasons = reasons_of(results)
    return {"flagged": bool(reasons), "reasons": reasons}
