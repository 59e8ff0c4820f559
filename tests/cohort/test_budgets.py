"""时间有界：每项检查、每个练习、每份提交都有上限；超时过一次的函数不再等。

Time limits per check, per exercise and per submission, through real workers: an endless
loop costs its limit once per exercise (the other checks needing that function fail at
once, saying so); a submission that sleeps just under every limit is stopped by the
exercise's budget, keeping the points of the checks done before. course.toml refuses
booleans where numbers are meant and non-finite limits; the worst case is computed from it.
"""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from grader.model.course import CourseError, load_course, parse_course
from grader.run.budgets import worst_case_seconds
from tests.in_process import grade
from tests.kit import EX01, KIT, make_course

SOLUTION = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
NOT_AGAIN = ("not waited for again", "不再等待", "not run again", "没有再运行")  # the budget's words, the report's


def _course(tmp, *, timeout: int, budget: int, submission_budget: int = 600):
    path = make_course(tmp, timeout=timeout)
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^(timeout\s*=.*)$", rf"\1\nbudget = {budget}", text, flags=re.MULTILINE)
    assert "submission_budget = 600" in text  # the kit's [limits]
    text = text.replace("submission_budget = 600", f"submission_budget = {submission_budget}", 1)
    path.write_text(text, encoding="utf-8")
    return path


def _grade(course, folder):
    # in this process: the limits are the sandbox's workers' (real processes either way)
    run = grade("--course", str(course), "all", "--submission", str(folder), "--format", "json")
    assert run.stdout.strip(), run.stderr[-2000:]
    return json.loads(run.stdout)


def test_an_endless_function_is_waited_for_once(tmp_path):
    course = _course(tmp_path, timeout=2, budget=30)
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / EX01).write_text(SOLUTION + "\n\ndef make_windows(tokens, block_size, stride=1):\n"
                                          "    while True:\n        pass\n", encoding="utf-8")
    report = _grade(course, folder)
    ex01 = report["exercises"][0]
    windows = [c for c in ex01["checks"] if "make_windows" in c["name"]]
    assert len(windows) >= 3 and not any(c["passed"] for c in windows)
    # the loop cost its limit once: every later check that calls it says it was not waited for again
    assert sum(any(w in c["message"] for w in NOT_AGAIN) for c in windows) >= len(windows) - 1
    assert all(c["passed"] for c in ex01["checks"] if "shift_pairs" in c["name"])  # the rest is unharmed


def test_a_slow_function_that_had_only_what_was_left_is_waited_for_again(tmp_path):
    """1.2 s a call against a 2 s check limit: a check's second call, with 0.8 s left, times out
    saying so (not "an endless loop?"), and the next check still calls the function."""
    course = _course(tmp_path, timeout=2, budget=60)
    folder = tmp_path / "sub"
    folder.mkdir()
    slow = SOLUTION.replace("def make_windows(", "def _make_windows(") + (
        "\n\ndef make_windows(*args, **kwargs):\n    import time\n    time.sleep(1.2)\n"
        "    return _make_windows(*args, **kwargs)\n")
    (folder / EX01).write_text(slow, encoding="utf-8")
    report = _grade(course, folder)
    windows = {c["name"]: c for c in report["exercises"][0]["checks"] if "make_windows" in c["name"]}
    assert windows["test_make_windows_course_example"]["passed"]  # one call: within the limit
    assert not any(any(w in c["message"] for w in NOT_AGAIN) for c in windows.values()), windows
    cut = [c for c in windows.values() if "what was left of the check's 2 s limit" in c["message"]
           or "的时限只剩这么多" in c["message"]]
    assert len(cut) >= 2 and not any("endless" in c["message"] or "死循环" in c["message"] for c in cut), windows


def test_a_slow_walker_is_stopped_by_the_exercise_budget(tmp_path):
    course = _course(tmp_path, timeout=3, budget=4)
    folder = tmp_path / "sub"
    folder.mkdir()
    slow = re.sub(r"^(def \w+\(.*\):)$", r"\1\n    import time; time.sleep(0.4)", SOLUTION, flags=re.MULTILINE)
    assert slow != SOLUTION
    (folder / EX01).write_text(slow, encoding="utf-8")
    report = _grade(course, folder)
    checks = report["exercises"][0]["checks"]
    assert checks[0]["passed"]  # done before the budget ran out: its points kept
    spent = [c for c in checks if "budget" in c["message"] or "预算" in c["message"]]
    stopped = [c for c in checks if any(w in c["message"] for w in NOT_AGAIN)]
    assert spent and not any(c["passed"] for c in spent + stopped)
    unstarted = [c for c in spent if "没有运行" in c["message"] or "not run:" in c["message"]]
    assert unstarted and not any("死循环" in c["message"] or "endless" in c["message"] for c in unstarted), spent
    assert not any(re.search(r"(超过|after) 0 s", c["message"]) for c in checks), checks  # never a bare "0 s"


def test_the_submission_budget_bounds_everything(tmp_path):
    course = _course(tmp_path, timeout=3, budget=30, submission_budget=2)
    folder = tmp_path / "sub"
    folder.mkdir()
    # an hour's sleep: only the 2 s budget ends the run before _grade's own ten-minute timeout
    (folder / EX01).write_text("import time\ntime.sleep(3600)\n" + SOLUTION, encoding="utf-8")
    report = _grade(course, folder)
    assert report["score"] == 0
    messages = " ".join(c["message"] for e in report["exercises"] for c in e["checks"])
    assert "submission's time budget" in messages or "本次提交的时间预算" in messages


def test_worst_case_from_course_toml():
    course = load_course(KIT / "course.toml")
    assert worst_case_seconds(course) == min(course.submission_budget, sum(e.budget for e in course.exercises))
    assert worst_case_seconds(course, ["ex01"]) == course.exercise("ex01").budget


def test_the_batch_says_its_bound_before_grading():
    """For a CI job's timeout: each submission's worst case, times the rounds of judges."""
    from grader.cohort.batch import time_bound

    course = load_course(KIT / "course.toml")
    each = worst_case_seconds(course, ["ex01"])
    said = time_bound(course, ["ex01"], 40, 2)
    assert f"40 to grade: at most {each:g} s of student code each, {20 * each / 60:.0f} min in all on 2 judge(s)" in said
    assert "40 名待评" in said
    assert ", 10.0 h in all on 1 judge(s)" in time_bound(course, [e.id for e in course.exercises], 60, 1)  # 60 x 600 s
    assert "on 3 judge(s)" in time_bound(course, ["ex01"], 3, 8)  # never more judges than students
    english = time_bound(course, ["ex01"], 40, 2, "en")  # --lang en: English alone
    assert english.startswith("40 to grade: at most") and "名" not in english


@pytest.mark.parametrize("edit", [
    ('timeout = 10', 'timeout = 10\npoints = true'),  # a release writes points down
    ('timeout = 10', 'timeout = nan'),
    ('timeout = 10', 'timeout = inf'),
    ('timeout = 10', 'timeout = true'),
    ('timeout = 10', 'timeout = -1'),
    ('timeout = 10', 'timeout = 10\nbudget = false'),
    ('timeout = 10', 'timeout = 10\nbudget = nan'),
    ('exercise_budget = 60', 'exercise_budget = inf'),
    ('submission_budget = 600', 'submission_budget = true'),
    ('format_version = 1', 'format_version = true'),
])
def test_course_toml_refuses_booleans_and_non_finite_limits(edit):
    text = (KIT / "course.toml").read_text(encoding="utf-8")
    old, new = edit
    assert old in text
    data = tomllib.loads(text.replace(old, new, 1))
    with pytest.raises(CourseError):
        parse_course(data, KIT, check_files=False)


def test_the_kits_course_toml_is_valid():
    data = tomllib.loads((KIT / "course.toml").read_text(encoding="utf-8"))
    course = parse_course(data, KIT, check_files=False)
    assert all(isinstance(e.points, int) and not isinstance(e.points, bool) for e in course.exercises)
