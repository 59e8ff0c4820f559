"""CI 报告格式：JUnit XML、Gradescope results.json、GitHub 摘要、Classroom 结果。

Tests for the CI formats (grader.report.junit, .gradescope, .classroom, .github) on hand-made
results: the JUnit XML validates against the Jenkins xunit plugin's junit-10.xsd, parses with
junitparser, names each case by the check's title under the exercise, and reports crashes and
time-outs as <error>; the Gradescope file has the fields Gradescope documents, numbers that
sort in course order and the instructor's choice of visibility for hidden checks; the GitHub
summary is a Markdown table whose cells a title cannot break.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.model.course import Exercise, Text
from grader.model.results import CheckResult, ExerciseResult, Finding
from grader.report.gradescope import HIDDEN_VISIBILITY
from grader.report.render import render


def _exercise(ex_id="ex01", title=Text("训练窗口 | x", "Windows | x")) -> Exercise:
    return Exercise(id=ex_id, assignment="ch05", file=f"{ex_id}_windows.py", title=title, section="5.2", points=4,
                    timeout=10, hints=(Text("提示", "hint"),))


def _results() -> list[ExerciseResult]:
    ok = CheckResult("ex01", "test_example", Text("课本例子", "course example"), 1, True, public=True, seconds=0.01)
    bad = CheckResult("ex01", "test_random", Text("随机输入", "random inputs"), 3, False, public=True,
                      finding=Finding("mismatch", "make_windows(...)", expected="(2, 4)", got="(4, 2)",
                                      zh="形状不同", en="shapes differ", output="<script>]]></script>\x1b[31m"),
                      seconds=0.02)
    hidden = CheckResult("ex01", "test_hidden", Text("隐藏", "hidden inputs"), 3, False, public=False,
                         finding=Finding("mismatch", "make_windows(...)", expected="(2, 4)", got="(4, 2)",
                                         zh="形状不同", en="shapes differ"), seconds=0.02)
    manual = CheckResult("ex01", "test_essay", Text("说明", "essay"), 0, True, manual=True)
    crash = CheckResult("ex01", "test_crash", Text("崩溃", "crashes"), 2, False,
                        finding=Finding("crash", "f()", zh="进程意外退出", en="the process died (signal 9)"))
    slow = CheckResult("ex01", "test_slow", Text("超时", "runs too long"), 2, False,
                       finding=Finding("timeout", "f()", zh="超时", en="ran past 10 s and was stopped"))
    return [ExerciseResult(_exercise(), [ok, bad, hidden, manual, crash, slow])]


def _many_checks() -> list[ExerciseResult]:
    checks = [CheckResult("ex09", f"test_{i}", Text(f"检查 {i}", f"check {i}"), 1, True, public=True)
              for i in range(1, 12)]
    return [ExerciseResult(_exercise("ex09"), checks)]


# The Jenkins xunit plugin's junit-10.xsd (MIT, jenkinsci/xunit-plugin,
# src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd) is third-party
# and not in this repository: CI names a copy in this variable (.ci/run does when it finds one).
JUNIT_SCHEMA_VARIABLE = "GRADE_TESTS_JUNIT_XSD"


def junit_schema(environ) -> Path:
    """The schema file `environ` names, or the test skipped saying how to provide it.

    >>> junit_schema({"GRADE_TESTS_JUNIT_XSD": "/ci/junit-10.xsd"})  # doctest: +SKIP
    PosixPath('/ci/junit-10.xsd')
    """
    named = environ.get(JUNIT_SCHEMA_VARIABLE)
    if not named:
        pytest.skip(f"the xunit plugin's junit-10.xsd is not in this repository: set {JUNIT_SCHEMA_VARIABLE} "
                    "to a copy to validate the JUnit report against it")
    if not Path(named).is_file():
        pytest.skip(f"{JUNIT_SCHEMA_VARIABLE} names {named}, which is not a file")
    return Path(named)


@pytest.mark.parametrize("environ", [{}, {JUNIT_SCHEMA_VARIABLE: ""}, {JUNIT_SCHEMA_VARIABLE: "/nonexistent/junit-10.xsd"}])
def test_without_the_schema_its_test_is_skipped_with_the_reason(environ):
    with pytest.raises(pytest.skip.Exception, match=JUNIT_SCHEMA_VARIABLE):
        junit_schema(environ)


def test_junit_validates_against_the_xunit_schema():
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(junit_schema(os.environ)))
    for results in (_results(), _many_checks()):
        for lang in ("zh", "en"):
            errors = list(schema.iter_errors(render(results, "junit", lang)))
            assert errors == [], errors[:3]


def test_junit_names_read_and_errors_are_errors():
    text = render(_results(), "junit", "en")
    root = ET.fromstring(text.split("\n", 1)[1])
    assert root.tag == "testsuites" and root.get("tests") == "6"
    assert root.get("failures") == "2" and root.get("errors") == "2" and root.get("skipped") is None
    suite = root.find("testsuite")
    assert suite.get("skipped") == "1" and suite.get("errors") == "2"
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["course example", "random inputs", "hidden inputs", "essay", "crashes",
                                              "runs too long"]
    assert {c.get("classname") for c in cases} == {"ex01"}
    failure = cases[1].find("failure")
    assert failure is not None and "shapes differ" in failure.get("message")
    assert "<script>]]></script>" in failure.text  # escaped in the file, intact when parsed
    assert cases[2].find("failure") is not None
    assert cases[4].find("error").get("type") == "crash" and cases[4].find("failure") is None
    assert cases[5].find("error").get("type") == "timeout"
    assert cases[3].find("skipped") is not None
    assert "score 0/3" in cases[1].find("system-out").text


def test_junit_reads_in_junitparser(tmp_path):
    junitparser = pytest.importorskip("junitparser")
    path = tmp_path / "junit.xml"
    path.write_text(render(_results(), "junit", "en"), encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(path))
    suite = next(iter(xml))
    cases = list(suite)
    assert suite.tests == 6 and suite.failures == 2 and suite.errors == 2 and suite.skipped == 1
    kinds = [type(r[0]).__name__ if r else "ok" for r in (c.result for c in cases)]
    assert kinds == ["ok", "Failure", "Failure", "Skipped", "Error", "Error"]


def test_gradescope_fields_and_visibility():
    data = json.loads(render(_results(), "gradescope", "en"))
    assert data["score"] == 1 and data["max_score"] == 11
    for key in ("execution_time", "output_format", "stdout_visibility", "visibility", "tests"):
        assert key in data
    assert data["stdout_visibility"] == "hidden"
    assert {t["visibility"] for t in data["tests"]} == {"visible", HIDDEN_VISIBILITY}
    hidden = [t for t in data["tests"] if t["name"].endswith("hidden inputs")][0]
    assert hidden["visibility"] == "after_published" and hidden["score"] == 0 and hidden["max_score"] == 3
    wrong = [t for t in data["tests"] if t["name"].endswith("random inputs")][0]
    assert wrong["visibility"] == "visible" and "shapes differ" in wrong["output"]
    for test in data["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output", "visibility"} <= set(test)
        assert test["status"] in ("passed", "failed")
    assert len(data["tests"]) == 5  # the manual check is not scored by the autograder
    due = json.loads(render(_results(), "gradescope", "en", hidden_visibility="after_due_date"))
    assert {t["visibility"] for t in due["tests"]} == {"visible", "after_due_date"}
    with pytest.raises(ValueError, match="without points"):  # Gradescope's "hidden": tests without points only
        render(_results(), "gradescope", "en", hidden_visibility="hidden")


def test_gradescope_summary_shows_nothing_a_hidden_check_decided():
    """The top-level output is always visible: per exercise the public checks' score and the
    hidden checks' points, never a figure a hidden check's result is in, in either language."""
    from dataclasses import replace

    failed, passed = _results(), _results()
    passed[0].checks = [replace(c, passed=True, finding=None) if not c.public else c for c in passed[0].checks]
    for lang in ("zh", "en"):
        one, other = (json.loads(render(r, "gradescope", lang)) for r in (failed, passed))
        assert one["score"] != other["score"]  # the hidden checks did decide something
        assert one["output"] == other["output"], (one["output"], other["output"])
        public = [c for c in failed[0].checks if c.public]
        figure = f"{sum(c.points for c in public)}/{sum(c.max_points for c in public)}"
        assert figure in one["output"] and f"/{failed[0].max_score}" not in one["output"]
    assert "public checks 1/4; hidden checks (7 points) shown once grades are published" in one["output"]
    due = json.loads(render(failed, "gradescope", "zh", hidden_visibility="after_due_date"))["output"]
    assert "公开检查 1/4 分；隐藏检查（7 分）在截止日期后显示" in due


def test_gradescope_numbers_sort_in_course_order():
    data = json.loads(render(_many_checks(), "gradescope", "en"))
    numbers = [t["number"] for t in data["tests"]]
    assert numbers[1] == "ex09.02" and numbers[9] == "ex09.10"
    assert sorted(numbers) == numbers  # ex09.10 after ex09.2: as strings and as dotted numbers
    assert sorted(numbers, key=lambda n: [int(p) for p in n[2:].split(".")]) == numbers


def test_classroom_runner_result():
    data = json.loads(render(_results(), "classroom", "en"))
    assert data["version"] == 1 and data["status"] == "fail" and data["max_score"] == 11
    assert [t["status"] for t in data["tests"]] == ["pass", "fail", "fail", "error", "error"]
    assert sum(t["score"] for t in data["tests"]) == 1
    for test in data["tests"]:
        assert {"name", "status", "score", "message", "line_no", "execution_time", "filename"} <= set(test)


def test_github_markdown_table():
    text = render(_results(), "github", "en")
    assert text.startswith("## Grade: 1/11")
    row = [line for line in text.splitlines() if "ex01" in line and line.startswith("| ❌")][0]
    assert row.count("|") - row.count("\\|") == 5  # the title's pipe is escaped
    assert "random inputs" in text and "<script>" not in text


def test_unknown_format():
    with pytest.raises(ValueError):
        render(_results(), "xml", "en")
