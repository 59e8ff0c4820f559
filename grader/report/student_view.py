"""The student's view of results: hidden checks say pass or fail, shapes and the diagnosis only.

Every report a student can read (text, the top of `--format json`, junit, gradescope,
classroom, github) is rendered from `for_student(results)` unless an instructor asks for
everything (`grade … --show-hidden`); the instructor's files (`grade batch`'s results.json)
keep both views apart (`grader.report.json_report`).

For a hidden (non-public) check, the student's copy keeps: passed or not, the points, the
title, the kind of failure, the known mistake it matches (`diagnosis`), and the judge's own
description of the failure (`Finding.hidden_view`, made by `grader.judge.hiding` from the
observations: shapes, and a reason in fixed words). It drops: the call's label with its
arguments (the hidden inputs; the function's name stays), expected and got values, the
message the submission's exception carried, its traceback, what it printed, the
hand-computed answer, the expected-vs-got line of a passed check, and pictures drawn from
values (ex12's loss table, ex13's first difference; ex05's shape pipeline stays).

    >>> [c.finding.expected for r in for_student(results) for c in r.checks if not c.public and c.finding]
    ['T(4, 8, 65)', 'float', None]
"""

from __future__ import annotations

import builtins
import re
from dataclasses import replace

from grader.model.results import CheckResult, ExerciseResult, Finding

# The reason shown when the judge left no description of its own (fixed words, by kind).
GENERIC = {
    "mismatch": ("值不对（隐藏测试：输入和期望值不显示）", "wrong values (a hidden test: its inputs and expected values are not shown)"),
    "error": ("你的代码抛出了异常（隐藏测试：消息不显示）", "your code raised an exception (a hidden test: the message is not shown)"),
    "crash": ("进程意外退出", "the process ended unexpectedly"),
    "missing": ("缺少这个检查需要的文件或名字", "a file or name this check needs is missing"),
    "custom": ("不对（隐藏测试：细节不显示）", "not right (a hidden test: the details are not shown)"),
    "grader_error": ("评分程序出错", "the grader failed on this check"),
}
# judge-made words: no input in them ("missing": the file's or the function's name; "rule": the
# names and lines of the submission's own source that break a rule, grader.judge.uses)
KEEP_WORDS = ("not_implemented", "timeout", "data", "import_error", "not_run", "refused", "missing", "rule")
KEEP_PICTURES = ("shapes",)  # drawn from shapes only


def call_name(label: str) -> str:
    """`loss_and_grad(2, 4, 32, seed=511)` -> `loss_and_grad(…)`: the name, not the inputs.

    Only a label that is a call of a function of the student's (a name, then its bracket) has
    one; a label in words ("the generator's next draws …", "tiny Shakespeare round trip"), a
    call of Python's or torch's own (`len(…)`, `torch.manual_seed(…)`) gives none: its first
    word would read as a name.

    >>> [call_name(x) for x in ("get_batch(data, 8)", "tiny Shakespeare round trip", "torch.manual_seed(42); f(1)")]
    ['get_batch(…)', '', '']
    """
    match = re.match(r"\s*([A-Za-z_]\w*)\(", label or "")
    if not match or match.group(1) in dir(builtins):
        return ""
    return match.group(1) + "(…)"


def student_finding(f: Finding) -> Finding:
    """A hidden check's finding as its student may see it."""
    view = f.hidden_view or {}
    if f.kind in KEEP_WORDS:
        zh, en = f.zh, f.en
    elif view:
        zh, en = view["zh"], view["en"]
    else:
        zh, en = GENERIC.get(f.kind, GENERIC["custom"])
    label = view["label"] if "label" in view else call_name(f.label)  # the judge's, from the stub's names
    return Finding(f.kind, label=label, expected=view.get("expected"), got=view.get("got"),
                   zh=zh, en=en, diagnosis=f.diagnosis)


def student_check(check: CheckResult) -> CheckResult:
    """The check as its student may see it (a public check is returned as it is)."""
    if check.public or check.manual:
        return check
    return replace(check, finding=student_finding(check.finding) if check.finding else None, shown=[],
                   attachments={k: v for k, v in check.attachments.items() if k in KEEP_PICTURES})


def for_student(results: list[ExerciseResult]) -> list[ExerciseResult]:
    """Copies of the results with every hidden check in its student's view."""
    return [replace(r, checks=[student_check(c) for c in r.checks]) for r in results]
