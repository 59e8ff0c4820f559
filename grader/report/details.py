"""What the CI formats say about one check: its failure text and a safe one-line summary.

Shared by junit, gradescope, classroom and github (grader.report.render picks the format).
"""

from __future__ import annotations

import re

from grader.model.messages import say
from grader.model.results import CheckResult
from grader.report.text import check_message

# A check that could not run to a verdict (JUnit <error>, Classroom "error"), as opposed to a
# wrong answer: the student's code crashed, raised, ran past its limit, or the grader or the
# lesson's data failed.
ERROR_KINDS = frozenset({"error", "crash", "timeout", "grader_error", "data", "import_error", "not_run", "refused"})


def automatic_checks(results):
    """(exercise, check) for every check the grader scores (manual ones are graded by hand)."""
    for result in results:
        for check in result.checks:
            if not check.manual:
                yield result.exercise, check


def is_error(check: CheckResult) -> bool:
    """True when a failed check ended in a crash, an exception or a time-out."""
    return not check.passed and check.finding is not None and check.finding.kind in ERROR_KINDS


def failure_text(check: CheckResult, lang: str) -> str:
    """The text report's lines for a failed check: why, then the student's traceback and output.

    Example: a mismatch with printed output ->
    "expected (2, 4), got (4, 2); shapes differ\\nYour output:\\n<what it printed>".
    """
    f = check.finding
    lines = [check_message(check, lang)]
    if f is not None:
        if f.traceback and f.kind != "grader_error":
            lines += [say("your_traceback", lang), f.traceback]
        if f.output:
            lines += [say("your_output", lang), f.output]
    return "\n".join(line for line in lines if line)


_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text) -> str:
    """Text XML 1.0 can hold: control characters a student printed are dropped.

    Example: "ok\\x1b[31m" -> "ok[31m".
    """
    return _NOT_XML.sub("", str(text))


def check_numbers(results) -> dict[tuple[str, str], str]:
    """A sortable number per check, in course order: `ex09.02` sorts before `ex09.10`.

    Example: the third check of ex09 -> {("ex09", "test_…"): "ex09.03"}.
    """
    numbers = {}
    for result in results:
        for k, check in enumerate(result.checks, start=1):
            numbers[(result.exercise.id, check.name)] = f"{result.exercise.id}.{k:02d}"
    return numbers
