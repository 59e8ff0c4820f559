"""The instructor's view of the answers (`--show-answers`), and what a student's report never shows.

On hand-made results: a hand-computed answer (`Finding.answer`), a hidden check's expected value
and a diagnosed mistake's fix appear under the failing check with `show_answers`, in text and in
json, and nowhere in the default (student's) output; `grade batch`'s results.json keeps them in
its "instructor" part. A check whose call raised before anything was compared (`assert_ok`)
says what came back, never "expected None".
"""

from __future__ import annotations

import json

import pytest

from grader.model.course import Exercise, Text
from grader.model.results import CheckResult, ExerciseResult, Finding
from grader.report.render import render

FIX = {"zh": "不共享时是两张 V × C 的表", "en": "untied: two V × C tables"}
DIAGNOSIS = {"id": "tied_untied_swapped", "section": "5.4", "zh": "共享与不共享弄反了", "en": "tied and untied swapped",
             "hint": 2, "fix": FIX}


def _exercise() -> Exercise:
    return Exercise(id="ex03", assignment="ch05", file="ex03_param_budget.py", title=Text("参数量", "budget"),
                    section="5.4", points=6, timeout=10, hints=(Text("提示？", "hint?"),))


def _results() -> list[ExerciseResult]:
    hand = CheckResult("ex03", "test_answer_params", Text("ANSWER_PARAMS", "ANSWER_PARAMS"), 2, False, public=True,
                       finding=Finding("mismatch", "ANSWER_PARAMS", expected="?", got="204,800,000 (204.8M)",
                                       zh="不对：偏小", en="not right: too small", diagnosis=DIAGNOSIS,
                                       answer="409,600,000 (409.6M)"))
    hidden = CheckResult("ex03", "test_block_params", Text("block_params", "block_params"), 2, False, public=False,
                         finding=Finding("mismatch", "block_params(768)", expected="7,077,888 (7.1M)", got="589,824",
                                         zh="值不同", en="value differs",
                                         hidden_view={"expected": "int", "got": "int", "zh": "值不对", "en": "wrong value"}))
    public = CheckResult("ex03", "test_ratio", Text("比例", "ratio"), 1, False, public=True,
                         finding=Finding("mismatch", "attention_cost_ratio(128000, 8000)", expected="256.0000",
                                         got="16.0000", zh="值不同", en="value differs"))
    passed = CheckResult("ex03", "test_ok", Text("通过", "fine"), 1, True, public=True)
    return [ExerciseResult(_exercise(), [hand, hidden, public, passed])]


SECRETS = ("409,600,000", "7,077,888", FIX["en"], FIX["zh"])


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "gradescope", "github", "classroom"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_students_report_never_shows_answers_or_fixes(fmt, lang):
    out = render(_results(), fmt, lang)
    for secret in SECRETS:
        assert secret not in out, (fmt, secret)


def test_show_answers_puts_the_answer_and_the_fix_under_each_failing_check():
    out = render(_results(), "text", "en", show_answers=True)
    lines = out.splitlines()
    hand = lines.index(next(l for l in lines if "ANSWER_PARAMS" in l and "✗" in l))
    block = lines[hand:lines.index(next(l for l in lines if "block_params" in l and "✗" in l))]
    assert "      answer (instructors): 409,600,000 (409.6M)" in block
    assert f"      fix (instructors): {FIX['en']}" in block
    assert "answer (instructors): 7,077,888 (7.1M)" in out  # a hidden check's expected value
    assert "answer (instructors): 256.0000" not in out  # already on its line as the expected value
    assert sum(1 for l in lines if "(instructors)" in l) == 3  # nothing under the passing check
    zh = render(_results(), "text", "zh", show_answers=True)
    assert "答案（教师）：409,600,000 (409.6M)" in zh and f"改法（教师）：{FIX['zh']}" in zh


def test_show_answers_in_json():
    book = json.loads(render(_results(), "json", "en", show_answers=True))
    checks = {c["name"]: c for c in book["exercises"][0]["checks"]}
    assert checks["test_answer_params"]["answer"] == "409,600,000 (409.6M)"
    assert checks["test_answer_params"]["fix"] == FIX["en"]
    assert checks["test_block_params"]["answer"] == "7,077,888 (7.1M)" and checks["test_block_params"]["fix"] is None
    assert checks["test_ok"]["answer"] is None and checks["test_ok"]["fix"] is None
    plain = json.loads(render(_results(), "json", "en"))
    assert all("answer" not in c and "fix" not in c for c in plain["exercises"][0]["checks"])  # unchanged


def test_the_instructors_part_of_results_json_keeps_answers_and_fixes():
    """What `grade batch` writes (as_json_dict(..., instructor=True)): both views, apart."""
    from grader.report.json_report import as_json_dict

    book = as_json_dict(_results(), "en", instructor=True)
    student = json.dumps(book["exercises"], ensure_ascii=False)
    assert not any(secret in student for secret in SECRETS)
    full = {c["name"]: c for c in book["instructor"]["exercises"][0]["checks"]}
    assert full["test_answer_params"]["answer"] == "409,600,000 (409.6M)"
    assert full["test_answer_params"]["fix"] == FIX and full["test_answer_params"]["diagnosis"] == "tied_untied_swapped"
    assert full["test_ok"]["fix"] is None


def test_show_answers_is_for_text_and_json_only():
    with pytest.raises(ValueError, match="text, json"):
        render(_results(), "gradescope", "en", show_answers=True)


# ------------------------------------------------------------------ an error before any comparison

def _raised() -> list[ExerciseResult]:
    """What `assert_ok` makes of a call that raised: no expected value, got "raised …"."""
    raised = CheckResult("ex03", "test_raises", Text("调用", "a call"), 1, False, public=True,
                         finding=Finding("error", "train_bigram(…)", got="raised ValueError",
                                         zh="你的代码抛出了异常 ValueError: x", en="your code raised ValueError: x"))
    hidden = CheckResult("ex03", "test_hidden_raises", Text("隐藏", "hidden"), 1, False, public=False,
                         finding=Finding("error", "f(1)", got="raised ValueError", zh="抛出了异常", en="raised",
                                         hidden_view={"expected": None, "got": "raises ValueError",
                                                      "zh": "你的代码抛出了 ValueError", "en": "your code raised ValueError"}))
    return [ExerciseResult(_exercise(), [raised, hidden])]


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github"])
def test_an_error_before_any_comparison_never_says_expected_none(fmt):
    for lang, word in (("en", "expected None"), ("zh", "期望 None")):
        out = render(_raised(), fmt, lang)
        assert word not in out and "None" not in out.replace("null", ""), out
    text = render(_raised(), "text", "en")
    assert "got raised ValueError" in text and "got raises ValueError" in text
