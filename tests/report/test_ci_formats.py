"""CI 报告格式：JUnit XML、Gradescope results.json、GitHub 摘要。

Tests for grader.report.ci_formats on hand-made results: the JUnit XML parses and counts
right (and escapes whatever the student printed), the Gradescope file has the fields
Gradescope documents with hidden checks "after_published", the GitHub summary is a
Markdown table whose cells cannot be broken by a title.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from grader.report.ci_formats import HIDDEN_VISIBILITY, render
from grader.model.course import Exercise, Text
from grader.model.results import Finding
from grader.model.results import CheckResult, ExerciseResult


def _results() -> list[ExerciseResult]:
    ex = Exercise(id="ex01", assignment="ch05", file="ex01_windows.py", title=Text("训练窗口 | x", "Windows | x"),
                  section="5.2", points=4, timeout=10, hints=(Text("提示", "hint"),))
    ok = CheckResult("ex01", "test_example", Text("课本例子", "course example"), 1, True, public=True, seconds=0.01)
    bad = CheckResult("ex01", "test_hidden", Text("随机输入", "random inputs"), 3, False, public=False,
                      finding=Finding("mismatch", "make_windows(...)", expected="(2, 4)", got="(4, 2)",
                                      zh="形状不同", en="shapes differ", output="<script>]]></script>\x1b[31m"),
                      seconds=0.02)
    manual = CheckResult("ex01", "test_essay", Text("说明", "essay"), 0, True, manual=True)
    return [ExerciseResult(ex, [ok, bad, manual])]


def test_junit_counts_and_escapes():
    text = render("junit", _results(), "en")
    root = ET.fromstring(text.split("\n", 1)[1])
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "1"
    assert root.get("skipped") == "1"
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["test_example", "test_hidden", "test_essay"]
    failure = cases[1].find("failure")
    assert failure is not None and "shapes differ" in failure.get("message")
    assert "<script>]]></script>" in failure.text  # escaped in the file, intact when parsed


def test_gradescope_fields_and_visibility():
    data = json.loads(render("gradescope", _results(), "en"))
    assert data["score"] == 1 and data["max_score"] == 4
    assert {t["visibility"] for t in data["tests"]} == {"visible", HIDDEN_VISIBILITY}
    hidden = [t for t in data["tests"] if t["visibility"] == HIDDEN_VISIBILITY][0]
    assert hidden["score"] == 0 and hidden["max_score"] == 3 and "shapes differ" in hidden["output"]
    for test in data["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
    assert len(data["tests"]) == 2  # the manual check is not scored by the autograder


def test_github_markdown_table():
    text = render("github", _results(), "en")
    assert text.startswith("## Grade: 1/4")
    row = [line for line in text.splitlines() if "ex01" in line and line.startswith("| ❌")][0]
    assert row.count("|") - row.count("\\|") == 5  # the title's pipe is escaped
    assert "random inputs" in text and "<script>" not in text


def test_unknown_format():
    with pytest.raises(ValueError):
        render("xml", _results(), "en")
