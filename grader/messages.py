"""Every message the grader itself prints, in Chinese and English.

Messages that come from checks and mistakes carry their own two languages; these are the
grader's. `say(key, lang, **values)` formats one. `tests/test_messages.py` proves every
message exists in both languages with the same placeholders.
"""

from __future__ import annotations

CATALOG: dict[str, dict[str, str]] = {
    "not_implemented": {"zh": "未完成", "en": "not implemented yet"},
    "not_implemented_line": {"zh": "未完成 / not implemented yet：在 {file} 里实现后再运行 `grade {id}`",
                             "en": "not implemented yet: fill in {file}, then run `grade {id}`"},
    "expected": {"zh": "期望", "en": "expected"},
    "got": {"zh": "得到", "en": "got"},
    "diagnosis": {"zh": "诊断", "en": "diagnosis"},
    "reread": {"zh": "重读 {section}", "en": "reread {section}"},
    "see_hint": {"zh": "提示：grade hint {id}（第 {level} 级）", "en": "hint: grade hint {id} (level {level})"},
    "your_traceback": {"zh": "你的代码的调用栈：", "en": "your code's traceback:"},
    "your_output": {"zh": "你的代码打印了：", "en": "your code printed:"},
    "manual_pending": {"zh": "待人工评分", "en": "awaiting manual grading"},
    "manual_missing": {"zh": "还没有作答", "en": "no answer yet"},
    "total": {"zh": "总分", "en": "total"},
    "all_passed": {"zh": "全部通过！", "en": "all checks passed!"},
    "some_failed": {"zh": "{failed} 项检查未通过", "en": "{failed} check(s) failed"},
    "hidden_note": {"zh": "正式评分还会运行隐藏测试。", "en": "The official grade also runs hidden tests."},
    "status_passed": {"zh": "通过", "en": "passed"},
    "status_failed": {"zh": "未通过", "en": "failed"},
    "status_not_started": {"zh": "未开始", "en": "not started"},
    "status_not_implemented": {"zh": "未完成", "en": "not implemented"},
    "list_header": {"zh": "练习", "en": "exercises"},
    "hint_header": {"zh": "{id} 提示 {level}/{total}", "en": "{id} hint {level}/{total}"},
    "hint_last": {"zh": "（这是最后一级提示）", "en": "(this is the last hint)"},
    "unknown_exercise": {"zh": "未知练习 {id}；可用：{known}", "en": "unknown exercise {id}; known: {known}"},
    "missing_folder": {"zh": "找不到提交目录 {path}", "en": "submission folder not found: {path}"},
    "no_reference": {"zh": "这个发行版不含参考答案（--reference 只供教师使用）",
                     "en": "this release has no reference solutions (--reference is for instructors)"},
    "data_missing": {"zh": "找不到 tiny Shakespeare 数据：{detail}", "en": "tiny Shakespeare is not available: {detail}"},
    "ex12_table": {"zh": "你的训练记录与课文的表格", "en": "your training log beside the lesson's table"},
    "check_ok": {"zh": "自检通过：{detail}", "en": "self-check passed: {detail}"},
    "check_bad": {"zh": "自检失败：{detail}", "en": "self-check failed: {detail}"},
    "grader_error": {"zh": "评分程序内部错误（不是你的错）", "en": "internal grader error (not your fault)"},
}


def say(key: str, lang: str, **values) -> str:
    entry = CATALOG[key]
    return entry["en" if lang == "en" else "zh"].format(**values)
