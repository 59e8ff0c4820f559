"""The lines under a failure: printed output with "… N more lines" and the kit's limit, the same
traceback once, a file that does not import said once."""

from __future__ import annotations

from grader.model.calls import Printed
from grader.model.course import Text
from grader.model.results import CheckResult, Finding
from grader.report.failure import import_block, import_failure, output_lines, where_lines


def plain(text, **_):
    return text


def test_a_long_output_says_how_many_lines_are_left_out():
    lines = output_lines("".join(f"row {i}\n" for i in range(20)), "en")
    assert lines[0].strip() == "your code printed:"
    assert sum(1 for l in lines if "| row" in l) == 8
    assert lines[-1].strip() == "… 12 more lines"


def test_a_flood_is_reported_as_the_kits_limit():
    kept = "".join(f"line {i}\n" for i in range(500))[:4000]
    lines = output_lines(Printed.of(kept, (20_000_000, 1_000_000)), "en")
    # the notice says what is shown (8 lines), not what the worker kept (4,000 characters)
    assert "your code printed 20 MB (1,000,000 lines), over the kit's limit; its first 8 lines:" in lines[0]
    assert sum(1 for l in lines if "| line" in l) == 8
    assert lines[-1].strip() == "… 999,992 more lines"
    assert "File too large" not in "\n".join(lines)
    zh = output_lines(Printed.of(kept, (20_000_000, 1_000_000)), "zh")
    assert "还有 999,992 行" in zh[-1] and "前 8 行" in zh[0]


def test_printed_survives_copies():
    import copy
    import pickle

    printed = Printed.of("x", (10, 2))
    assert copy.deepcopy(printed).total == (10, 2) and pickle.loads(pickle.dumps(printed)).total == (10, 2)
    assert Printed.of("x", None) == "x" and not isinstance(Printed.of("x", "bad"), Printed)


def test_the_same_traceback_is_shown_once_per_exercise():
    seen: set[str] = set()
    first = where_lines("error", '  File "ex01_windows.py", line 3, in f\n    boom()', "en", seen)
    again = where_lines("error", '  File "ex01_windows.py", line 3, in f\n    boom()', "en", seen)
    assert len(first) == 3 and again == ["      your code's traceback: (the same as above)"]
    assert where_lines("timeout", "  File \"a.py\", line 1, in g", "en")[0].strip() == "your code was here:"


def test_a_file_that_does_not_import_is_one_block_and_one_line():
    finding = Finding("import_error", "f()", zh="这个文件没能导入：SyntaxError: x", en="the file does not import: SyntaxError: x",
                      traceback='  File "ex01_windows.py", line 52\n    windows = [\n              ^')
    checks = [CheckResult("ex01", f"test_{i}", Text(zh=f"检查 {i}", en=f"check {i}"), 1, False, finding=finding)
              for i in range(8)]
    stopped = import_failure(checks)
    lines = import_block(stopped, "ex01_windows.py", "en", plain)
    text = "\n".join(lines)
    assert text.count("SyntaxError") == 1 and "windows = [" in text
    assert lines[-1].startswith("  ✗ 8 check(s) could not run") and len(lines) == 6


def test_a_file_not_in_utf8_says_how_to_save_it_again():
    """A file an editor saved as GBK: Python's words, then how to save it as UTF-8, indented as one block."""
    from grader.judge.student_errors import student_error_finding
    from grader.model.calls import Observation

    obs = Observation.from_answer({"ok": False, "error": {
        "type": "SyntaxError", "mro": ["SyntaxError"], "import_error": True, "traceback": "",
        "message": "(unicode error) 'utf-8' codec can't decode byte 0xc1 in position 0: invalid start byte"}})
    finding = student_error_finding(obs, "shift_pairs(…)")
    checks = [CheckResult("ex01", "test_a", Text(zh="检查", en="check"), 1, False, finding=finding)]
    for lang, words in (("en", "Save it again as UTF-8"), ("zh", "请用 UTF-8 重新保存")):
        lines = import_block(import_failure(checks), "ex01_windows.py", lang, plain)
        assert lines[1].startswith("      SyntaxError: (unicode error)") and lines[2].startswith("      ")
        assert words in lines[2], lines
    utf16 = student_error_finding(Observation.from_answer({"ok": False, "error": {
        "type": "SyntaxError", "mro": ["SyntaxError"], "import_error": True,
        "message": "source code string cannot contain null bytes"}}), "f")
    assert "UTF-16" in utf16.en and "UTF-8" in utf16.zh
    plain_error = student_error_finding(Observation.from_answer({"ok": False, "error": {
        "type": "SyntaxError", "mro": ["SyntaxError"], "import_error": True, "message": "invalid syntax"}}), "f")
    assert "UTF-8" not in plain_error.en  # any other syntax error: no word about encodings
