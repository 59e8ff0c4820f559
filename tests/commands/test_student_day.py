"""A newcomer's day in both languages: --lang anywhere, no Chinese in English (but quotes of the
course text), no internal names, a file that does not import said once, a report that fits a
40-row terminal."""

from __future__ import annotations

import re

import pytest

from tests.in_process import grade

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
INTERNAL = re.compile(r"MissingName|MissingSubmissionFile|WorkerDied|WorkerTimeout|EOFError|ImportFailed|"
                      r"BrokenPipe|worker exited|grader-worker")




def chinese_outside_quotes(text: str) -> list[str]:
    """Lines of `text` with Chinese that is not inside “…” (a quote of the course text)."""
    return [line for line in text.splitlines() if CJK.search(re.sub(r"“[^”]*”", "", line))]


@pytest.mark.parametrize("args", [
    ("hint", "ex01", "--level", "1", "--lang", "en"),
    ("--lang", "en", "hint", "ex01", "--level", "1"),
    ("list", "--lang", "en"),
    ("list", "--lang=en"),
    ("status", "--lang", "en"),
])
def test_lang_goes_before_or_after_any_command(root, tmp_path, args):
    run = grade(*args, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "No such option" not in run.stderr
    assert not chinese_outside_quotes(run.stdout), chinese_outside_quotes(run.stdout)


def test_grade_lang_sets_the_language_and_the_option_wins(tmp_path):
    english = grade("list", cwd=tmp_path, env={"GRADE_LANG": "en"})
    assert "Chapter 5" in english.stdout and not chinese_outside_quotes(english.stdout)
    chinese = grade("list", "--lang", "zh", cwd=tmp_path, env={"GRADE_LANG": "en"})
    assert "第 5 章" in chinese.stdout


def test_watch_takes_lang_after_the_command(tmp_path):
    (tmp_path / "exercises").mkdir()
    run = grade("watch", "ex99", "--lang", "en", cwd=tmp_path)
    assert run.returncode == 2 and "unknown exercise ex99" in run.stderr


def test_grade_data_labels_follow_the_language(tmp_path):
    import os

    if not os.environ.get("GPT_COURSE_DATA"):
        pytest.skip("GPT_COURSE_DATA is not set")
    english = grade("data", "--no-download", "--lang", "en", cwd=tmp_path)
    chinese = grade("data", "--no-download", "--lang", "zh", cwd=tmp_path)
    assert english.returncode == chinese.returncode == 0, english.stderr + chinese.stderr
    assert "path:" in english.stdout and "bytes" in english.stdout and not CJK.search(english.stdout)
    assert "路径" in chinese.stdout and "字节" in chinese.stdout


def test_a_syntax_error_is_said_once_with_a_caret(root, tmp_path, in_process_runner):
    source = (root / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    (tmp_path / "ex01_windows.py").write_text(source.replace("    windows = []", "    windows = [", 1), encoding="utf-8")
    run = grade("ex01", "--lang", "en", "--submission", str(tmp_path))
    out = run.stdout
    assert run.returncode == 1
    assert out.count("SyntaxError") == 1 and out.count("windows = [") == 1, out
    caret = out.splitlines()[out.splitlines().index(next(l for l in out.splitlines() if "windows = [" in l)) + 1]
    assert caret.strip() == "^"
    assert "8 check(s) could not run" in out
    assert len(out.splitlines()) <= 10
    assert not chinese_outside_quotes(out) and not INTERNAL.search(out + run.stderr)


def test_a_wrong_answer_fits_a_terminal_in_english(root, tmp_path, in_process_runner):
    source = (root / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    wrong = source.replace("y = tokens[i + 1:i + block_size + 1]", "y = tokens[i:i + block_size]", 1)
    assert wrong != source
    (tmp_path / "ex01_windows.py").write_text(wrong, encoding="utf-8")
    run = grade("ex01", "--lang", "en", "--submission", str(tmp_path))
    lines = run.stdout.splitlines()
    assert run.returncode == 1 and len(lines) <= 40, run.stdout
    passed = [l for l in lines if l.startswith("  ✓")]
    assert passed and all(len(l) <= 80 for l in passed)  # a passing check: one short line
    assert not chinese_outside_quotes(run.stdout), chinese_outside_quotes(run.stdout)
    assert not INTERNAL.search(run.stdout + run.stderr)
    assert "2,084" not in run.stdout and re.search(r"make_windows\(\[[^\]]*\], \d", run.stdout)


def test_show_answers_is_the_instructors_option(root, tmp_path, in_process_runner):
    """`grade ex03 --show-answers` (text, json) puts the hand answer and the fix under the failing
    check; the student's default report has neither; other formats are a usage error."""
    import json

    source = (root / "solutions" / "ex03_param_budget.py").read_text(encoding="utf-8")
    (tmp_path / "ex03_param_budget.py").write_text(
        source.replace("ANSWER_PARAMS = 409_600_000", "ANSWER_PARAMS = 204_800_000", 1), encoding="utf-8")
    student = grade("ex03", "--lang", "en", "--submission", str(tmp_path))
    assert student.returncode == 1 and "409,600,000" not in student.stdout and "(instructors)" not in student.stdout
    text, out = tmp_path / "grade.txt", tmp_path / "grade.json"  # one run writes both (--format/--out pairs)
    shown = grade("ex03", "--lang", "en", "--submission", str(tmp_path), "--show-answers",
                  "--format", "text", "--out", str(text), "--format", "json", "--out", str(out))
    assert shown.returncode == 1, shown.stderr
    assert "answer (instructors): 409,600,000 (409.6M)" in text.read_text(encoding="utf-8")
    assert "fix (instructors): Untied (tied=False): two V × C tables" in text.read_text(encoding="utf-8")
    (check,) = [c for c in json.loads(out.read_text())["exercises"][0]["checks"] if c["name"] == "test_answer_params"]
    assert check["answer"] == "409,600,000 (409.6M)" and "2 * V * C" in check["fix"]
    refused = grade("ex03", "--lang", "en", "--submission", str(tmp_path), "--format", "junit", "--show-answers")
    assert refused.returncode == 2 and "text and json" in refused.stderr
