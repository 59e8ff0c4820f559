"""GitHub Classroom: the runner result its grading reporter reads.

`classroom-resources/autograding-grading-reporter` takes a comma-separated list of runner ids
and, for each, reads the environment variable `<ID>_RESULTS` (the id upper-cased): base64 of
a JSON object `{"version": 1, "status": "pass"|"fail"|"error", "max_score": N, "tests": [...]}`.
It posts "Points X/Y" to Classroom, X the sum of every test's `score` and Y the sum of the
runners' `max_score`, and fails the job when a runner's status is "fail" or "error".

The kit writes ONE runner for the whole course (`grade all --format classroom`): every check
is a test with its own points, so X/Y is the kit's score exactly. (The reporter's console
table also shows, per runner, passed tests / tests × max_score, which treats the tests as
equal: that line is only a rough picture when checks weigh differently; the Points notice,
which Classroom records, is exact.) A manually graded check is not a test.

Per test: `name` ("ex03 count_params：…"), `status`, `score`, `message` (why it failed),
`test_code` (for a failed check, the command that shows it: "grade ex03"), `filename` (the exercise file), `line_no` (0),
`execution_time` (seconds) and `duration` (milliseconds, as the reporter's own runners write).
The runner's `status` is "pass" when every check passed, else "fail" (a test's own status
says "error" for a crash, an exception or a time-out). `render_classroom` returns the JSON;
the example workflow (examples/ci/classroom.yml) base64-encodes it into the step output
`result`, which the reporter step receives as `GRADE_RESULTS`.
"""

from __future__ import annotations

import json

from grader.model.results import ExerciseResult
from grader.report.details import automatic_checks, failure_text, is_error
from grader.report.review import reasons_of, reasons_text


def _status(check) -> str:
    if check.passed:
        return "pass"
    return "error" if is_error(check) else "fail"


def classroom_dict(results: list[ExerciseResult], lang: str = "zh") -> dict:
    """The runner result.

    Example: ex01 with a passing 1-point check and a wrong 3-point check ->
    {"version": 1, "status": "fail", "max_score": 4, "tests": [{"name": "ex01 课本例子",
    "status": "pass", "score": 1, …}, {"name": "ex01 随机输入", "status": "fail", "score": 0, …}]}
    """
    tests = []
    for ex, check in automatic_checks(results):
        tests.append({
            "name": f"{ex.id} {check.title(lang)}",
            "status": _status(check),
            "score": check.points,
            "max_score": check.max_points,
            "message": "" if check.passed else failure_text(check, lang),
            "test_code": "" if check.passed else f"grade {ex.id}",  # the reporter prints it under the test
            "filename": f"exercises/{ex.file}",
            "line_no": 0,
            "execution_time": round(check.seconds, 3),
            "duration": int(round(check.seconds * 1000)),
        })
    reasons = reasons_of(results)
    if reasons:  # no points of its own: the mark and its reasons where the reporter shows messages
        tests.append({"name": "review", "status": "fail", "score": 0, "max_score": 0,
                      "message": reasons_text(reasons, lang), "test_code": "grade all", "filename": "",
                      "line_no": 0, "execution_time": 0, "duration": 0})
    status = "pass" if tests and all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": status, "max_score": sum(r.max_score for r in results), "tests": tests}


def render_classroom(results: list[ExerciseResult], lang: str = "zh") -> str:
    return json.dumps(classroom_dict(results, lang), ensure_ascii=False)
