"""JUnit XML for CI test reports, valid against the Jenkins xunit plugin's junit-10.xsd.

One <testsuite> per exercise (name "ex03 title", with <properties> for its score), one
<testcase> per check: `classname` the exercise id, `name` the check's title, so that a CI page
reads "ex03 · count_params：共享权重只算一次". A wrong answer is a <failure>; a check that
crashed, raised, ran past its time limit or hit a grader/data problem is an <error>; a
manually graded check is <skipped>. The check's points go into <system-out> ("score 0/3").
Built with xml.etree, so whatever the student's code printed is escaped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.model.results import ExerciseResult
from grader.report.details import failure_text, is_error, xml_text
from grader.report.review import reasons_text
from grader.report.text import check_message


def _time(seconds: float) -> str:
    return f"{max(seconds, 0.0):.3f}"


def _case(suite: ET.Element, result: ExerciseResult, check, lang: str) -> str:
    """Add one <testcase>; returns its outcome: passed | failure | error | skipped."""
    ex = result.exercise
    case = ET.SubElement(suite, "testcase", classname=ex.id, name=xml_text(check.title(lang) or check.name),
                         time=_time(check.seconds))
    outcome = "passed"
    if check.manual:
        ET.SubElement(case, "skipped", message=xml_text(check_message(check, lang)))
        outcome = "skipped"
    elif not check.passed:
        outcome = "error" if is_error(check) else "failure"
        message = check_message(check, lang) or check.name
        node = ET.SubElement(case, outcome, message=xml_text(message[:500]),
                             type=check.finding.kind if check.finding else "failed")
        node.text = xml_text(failure_text(check, lang))
    out = ET.SubElement(case, "system-out")
    out.text = f"{check.name}: score {check.points}/{check.max_points}"
    return outcome


def render_junit(results: list[ExerciseResult], lang: str = "zh") -> str:
    """The report as JUnit XML text (with the XML declaration).

    Example: ex01 with one passing and one wrong check ->
    <testsuites tests="2" failures="1" errors="0"><testsuite name="ex01 训练窗口…" …>
    <testcase classname="ex01" name="课本例子" …/>…
    """
    suites = ET.Element("testsuites", name="grade")
    totals = {"tests": 0, "failure": 0, "error": 0, "time": 0.0}
    for result in results:
        ex = result.exercise
        suite = ET.SubElement(suites, "testsuite", name=xml_text(f"{ex.id} {ex.title(lang)}"))
        props = ET.SubElement(suite, "properties")
        for key, value in (("exercise", ex.id), ("section", ex.section(lang)), ("score", result.score),
                           ("max_score", result.max_score)):
            ET.SubElement(props, "property", name=key, value=xml_text(value))
        if result.review:
            ET.SubElement(props, "property", name="review", value=xml_text(reasons_text(result.review, lang)))
        counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
        for check in result.checks:
            counts[_case(suite, result, check, lang)] += 1
        if result.review:  # after the testcases, as junit-10.xsd orders a suite's children
            ET.SubElement(suite, "system-out").text = xml_text(reasons_text(result.review, lang, limit=40))
        seconds = sum(c.seconds for c in result.checks)
        suite.set("tests", str(len(result.checks)))
        suite.set("failures", str(counts["failure"]))
        suite.set("errors", str(counts["error"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", _time(seconds))
        totals["tests"] += len(result.checks)
        totals["failure"] += counts["failure"]
        totals["error"] += counts["error"]
        totals["time"] += seconds
    # <testsuites> takes no `skipped` in junit-10.xsd: the suites carry it
    suites.set("tests", str(totals["tests"]))
    suites.set("failures", str(totals["failure"]))
    suites.set("errors", str(totals["error"]))
    suites.set("time", _time(totals["time"]))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
