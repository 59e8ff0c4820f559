"""GitHub Classroom：用评分报告器自己的代码读工具包的 --format classroom 输出。

The Classroom grading reporter's own JavaScript (tests/report/classroom_reporter/src, copied
from classroom-resources/autograding-grading-reporter) runs under node on the kit's output,
passed the way the example workflow passes it (base64 in GRADE_RESULTS, runners "grade"):
its "Points X/Y" notice must be the kit's score, and it fails the job exactly when a check
failed. Outputs come from real `grade` runs (the reference, the stubs) and from hand-made
results whose checks weigh differently.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.model.course import Exercise, Text, load_course
from grader.model.results import CheckResult, ExerciseResult, Finding
from grader.report.render import render
from tests.node import NODE_MODULES

ROOT = Path(__file__).resolve().parents[2]
REPORTER = Path(__file__).resolve().parent / "classroom_reporter" / "src" / "main.js"
GRADE = Path(sys.executable).parent / "grade"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_MODULES / "@actions" / "core").is_dir(),
    reason="node and the reporter's npm packages (.ci/run installs them into .ci/node)")


def report(result_json: str) -> tuple[int, int, int, str]:
    """Run the reporter on one runner "grade": (points, max points, exit code, its output)."""
    env = {**os.environ, "NODE_PATH": str(NODE_MODULES), "INPUT_RUNNERS": "grade",
           "GRADE_RESULTS": base64.b64encode(result_json.encode("utf-8")).decode("ascii")}
    env.pop("GITHUB_OUTPUT", None)
    proc = subprocess.run(["node", str(REPORTER)], env=env, capture_output=True, text=True, timeout=60)
    found = re.search(r"^::notice title=Autograding complete::Points (\d+(?:\.\d+)?)/(\d+)$", proc.stdout, re.M)
    assert found, proc.stdout + proc.stderr
    return float(found.group(1)), int(found.group(2)), proc.returncode, proc.stdout


def _weighted() -> list[ExerciseResult]:
    ex = Exercise(id="ex03", assignment="ch05", file="ex03_param_budget.py", title=Text("参数量", "budget"),
                  section="5.4", points=9, timeout=10, hints=(Text("提示", "hint"),))
    checks = [CheckResult("ex03", "test_a", Text("例子", "example"), 1, True, public=True),
              CheckResult("ex03", "test_b", Text("共享", "tied"), 5, True),
              CheckResult("ex03", "test_c", Text("随机", "random"), 3, False,
                          finding=Finding("mismatch", "f()", expected="1", got="2", zh="不同", en="differ")),
              CheckResult("ex03", "test_d", Text("崩溃", "crash"), 2, False, finding=Finding("crash", "f()")),
              CheckResult("ex03", "test_e", Text("说明", "essay"), 0, True, manual=True)]
    return [ExerciseResult(ex, checks)]


def test_points_are_the_kits_score_with_weighted_checks():
    results = _weighted()
    points, possible, code, out = report(render(results, "classroom", "en"))
    assert (points, possible) == (6, 11)  # 1 + 5 of 1 + 5 + 3 + 2; the manual check is not a test
    assert code == 1 and "Some tests failed." in out


def _grade(*args: str, tmp_path: Path) -> str:
    out = tmp_path / "classroom.json"
    proc = subprocess.run([str(GRADE), *args, "--format", "classroom", "--out", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return out.read_text(encoding="utf-8")


def test_the_reference_passes_with_full_points(tmp_path):
    points, possible, code, out = report(_grade("ex01", "--reference", tmp_path=tmp_path))
    assert (points, possible) == (load_course().exercise("ex01").points,) * 2
    assert code == 0 and "::error::" not in out


def test_the_stubs_score_nothing_and_fail_the_job(tmp_path):
    points, possible, code, out = report(_grade("ex03", "--submission", str(ROOT / "exercises"), tmp_path=tmp_path))
    assert (points, possible) == (0, load_course().exercise("ex03").points)
    assert code == 1 and "Some tests failed." in out
