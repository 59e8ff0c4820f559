"""Reports for CI systems: JUnit XML, Gradescope's results.json, a GitHub job summary.

`render(fmt, results, lang)` with fmt one of `junit`, `gradescope`, `github`.

- junit: one <testsuite> per exercise, one <testcase> per check (classname = exercise id,
  name = check name); a failed check has a <failure message=…> with the text report's
  lines for it; a manual check is <skipped>. Built with xml.etree, so any text the
  student's code printed is escaped.
- gradescope: the autograder `results.json` as Gradescope documents it: `score`,
  `max_score`, `output`, `visibility`, `stdout_visibility`, and `tests[]` with `name`,
  `number`, `score`, `max_score`, `output`, `visibility`, `status`. Public checks are
  "visible"; hidden checks are "after_published" (the student sees them once grades are
  published), so hidden inputs never show before the deadline.
- github: Markdown for `$GITHUB_STEP_SUMMARY`: a table of exercises, then the failed
  checks with what was expected against what came back.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from grader.model.messages import say
from grader.report.json_report import as_json_dict
from grader.report.text import check_message
from grader.model.results import ExerciseResult

HIDDEN_VISIBILITY = "after_published"
FORMATS = ("junit", "gradescope", "github")


def render(fmt: str, results: list[ExerciseResult], lang: str = "zh") -> str:
    if fmt == "junit":
        return render_junit(results, lang)
    if fmt == "gradescope":
        return render_gradescope(results, lang)
    if fmt == "github":
        return render_github(results, lang)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def _failure_text(check, lang: str) -> str:
    f = check.finding
    lines = [check_message(check, lang)]
    if f is not None:
        if f.traceback and f.kind != "grader_error":
            lines += [say("your_traceback", lang), f.traceback]
        if f.output:
            lines += [say("your_output", lang), f.output]
    return "\n".join(line for line in lines if line)


_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text) -> str:
    """Text XML 1.0 can hold (control characters a student printed are dropped)."""
    return _NOT_XML.sub("", str(text))


def render_junit(results: list[ExerciseResult], lang: str = "zh") -> str:
    suites = ET.Element("testsuites", name="grade")
    total = failures = skipped = 0
    seconds = 0.0
    for result in results:
        ex = result.exercise
        suite = ET.SubElement(suites, "testsuite", name=_x(f"{ex.id} {ex.title(lang)}"))
        n_fail = n_skip = 0
        suite_time = 0.0
        for check in result.checks:
            case = ET.SubElement(suite, "testcase", classname=ex.id, name=check.name,
                                 time=f"{check.seconds:.3f}")
            ET.SubElement(case, "properties")
            props = case.find("properties")
            for key, value in (("title", check.title(lang)), ("score", check.points),
                               ("max_score", check.max_points), ("public", check.public)):
                ET.SubElement(props, "property", name=key, value=_x(value))
            if check.manual:
                ET.SubElement(case, "skipped", message=_x(check_message(check, lang)))
                n_skip += 1
            elif not check.passed:
                failure = ET.SubElement(case, "failure", message=_x((check_message(check, lang) or check.name)[:500]),
                                        type=check.finding.kind if check.finding else "failed")
                failure.text = _x(_failure_text(check, lang))
                n_fail += 1
            suite_time += check.seconds
        suite.set("tests", str(len(result.checks)))
        suite.set("failures", str(n_fail))
        suite.set("errors", "0")
        suite.set("skipped", str(n_skip))
        suite.set("time", f"{suite_time:.3f}")
        total += len(result.checks)
        failures += n_fail
        skipped += n_skip
        seconds += suite_time
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", "0")
    suites.set("skipped", str(skipped))
    suites.set("time", f"{seconds:.3f}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def render_gradescope(results: list[ExerciseResult], lang: str = "zh") -> str:
    tests = []
    for result in results:
        ex = result.exercise
        for check in result.checks:
            if check.manual:
                continue
            tests.append({
                "name": f"{ex.id} {check.title(lang)}",
                "number": f"{ex.id}.{len([t for t in tests if t['number'].startswith(ex.id + '.')]) + 1}",
                "score": check.points,
                "max_score": check.max_points,
                "status": "passed" if check.passed else "failed",
                "output": "" if check.passed else _failure_text(check, lang),
                "visibility": "visible" if check.public else HIDDEN_VISIBILITY,
            })
    summary = as_json_dict(results, lang)
    lines = [f"{e['id']}  {e['title']}: {e['score']}/{e['max_score']}" for e in summary["exercises"]]
    return json.dumps({
        "score": summary["score"],
        "max_score": summary["max_score"],
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }, ensure_ascii=False, indent=2)


def _md(text) -> str:
    """A table cell: no pipes or newlines, no HTML."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
            .replace("<", "&lt;").replace(">", "&gt;"))


def render_github(results: list[ExerciseResult], lang: str = "zh") -> str:
    summary = as_json_dict(results, lang)
    en = lang == "en"
    lines = [f"## {'Grade' if en else '评分'}: {summary['score']}/{summary['max_score']}", ""]
    lines += ["| | " + (" | ".join(["exercise", "title", "score"]) if en else "练习 | 标题 | 得分") + " |",
              "|---|---|---|---|"]
    for e in summary["exercises"]:
        mark = "✅" if e["status"] == "passed" else ("⬜" if e["status"] in ("not_implemented", "empty") else "❌")
        lines.append(f"| {mark} | {e['id']} | {_md(e['title'])} | {e['score']}/{e['max_score']} |")
    failed = [(r.exercise, c) for r in results for c in r.checks if not c.passed and not c.manual]
    if failed:
        lines += ["", f"### {'Failed checks' if en else '未通过的检查'}", ""]
        for ex, check in failed:
            lines.append(f"- **{ex.id}** {_md(check.title(lang))}: {_md(check_message(check, lang))}")
    return "\n".join(lines) + "\n"
