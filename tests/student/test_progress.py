"""Progress (`grade status`, `grade list`) and hints (`grade hint`), through the command line."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from grader.commands.main import main
from grader.model.course import load_course
from grader.model.messages import say
from grader.student.hints import ladder
from grader.student.progress import (FAILED, NOT_STARTED, PASSED, STATE_FILE, load_state, next_unfinished, progress_of,
                             record_attempt, save_state, state_of)
from grader.model.results import CheckResult, ExerciseResult

COURSE = load_course()
HAN = re.compile(r"[\u4e00-\u9fff]")
FIRST, SECOND, THIRD = (e.id for e in COURSE.exercises[:3])


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def result(ex_id: str, passed: list[bool], not_implemented: bool = False) -> ExerciseResult:
    from grader.model.course import Text
    from grader.model.results import Finding

    ex = COURSE.exercise(ex_id)
    checks = [CheckResult(ex_id, f"test_{i}", Text("检查", "check"), 2, p,
                          finding=None if p else Finding("not_implemented" if not_implemented else "mismatch"))
              for i, p in enumerate(passed)]
    return ExerciseResult(ex, checks)


def test_states_from_attempts(tmp_path):
    record_attempt(tmp_path, [result(FIRST, [True, True]), result(SECOND, [True, False]),
                              result(THIRD, [False, False], not_implemented=True)])
    rows = {r.exercise.id: r for r in progress_of(COURSE, tmp_path)}
    assert rows[FIRST].state == PASSED and rows[FIRST].score == 4
    assert rows[SECOND].state == FAILED and rows[SECOND].score == 2
    assert rows[THIRD].state == NOT_STARTED  # an attempt that implements nothing has not started
    untouched = COURSE.exercises[3].id
    assert rows[untouched].state == NOT_STARTED and rows[untouched].time == ""
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d$", rows[FIRST].time)
    assert state_of(None) == NOT_STARTED and state_of({"status": "empty"}) == FAILED


def test_next_unfinished_wraps_around():
    rows = progress_of(COURSE, "/nonexistent")
    assert next_unfinished(rows) == FIRST
    assert next_unfinished(rows, after=FIRST) == SECOND
    last = COURSE.exercises[-1].id
    assert next_unfinished(rows, after=last) == FIRST


@pytest.mark.parametrize("lang,words", [("zh", ("通过", "未通过", "未开始", "还没评过")),
                                        ("en", ("passed", "failed", "not started", "never graded"))])
def test_status_shows_every_exercise_with_state_points_and_time(tmp_path, lang, words):
    record_attempt(tmp_path, [result(FIRST, [True, True]), result(SECOND, [False, True])])
    out = run("--lang", lang, "status", "--submission", str(tmp_path), "--no-color").output
    for ex in COURSE.exercises:
        assert ex.id in out and ex.title(lang)[:6] in out
    for word in words:
        assert word in out
    line = next(l for l in out.splitlines() if FIRST in l)
    assert "4/" in line and re.search(r"\d\d-\d\d \d\d:\d\d", line)
    assert re.search(r"(进度|progress) 1/%d" % len(COURSE.exercises), out)


def test_list_shows_the_same_at_a_glance(tmp_path):
    record_attempt(tmp_path, [result(FIRST, [True])])
    out = run("--lang", "zh", "list", "--submission", str(tmp_path), "--no-color").output
    line = next(l for l in out.splitlines() if FIRST in l)
    assert "通过" in line and COURSE.exercise(FIRST).section("zh") in line
    assert all(e.id in out for e in COURSE.exercises)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_list_shows_titles_and_sections_whole_in_the_language_asked(tmp_path, lang):
    """`grade list --lang en` showed the bigram lesson's sections in Chinese, cut with `…`;
    off a terminal nothing is cut: every title and section whole, on its exercise's line."""
    out = run("--lang", lang, "list", "--submission", str(tmp_path), "--no-color").output
    assert "…" not in out
    for ex in COURSE.exercises:
        line = next(l for l in out.splitlines() if f" {ex.id} " in l)
        assert ex.title(lang) in line and ex.section(lang) in line, line
        if lang == "en":
            assert not HAN.search(line.replace(ex.id, "")), line


@pytest.mark.parametrize("lang,compact", [("zh", True), ("en", True), ("zh", False), ("en", False)])
def test_a_narrow_terminal_wraps_titles_and_sections_never_cuts_them(tmp_path, lang, compact):
    """A terminal narrower than the table: each line fits, and what wraps is all there, no
    character cut in two (a title was cut with `…` even where the terminal had room)."""
    from grader.report.layout import width
    from grader.student.progress import status_lines

    record_attempt(tmp_path, [result(FIRST, [True, False])])
    columns = 64 if compact else 90
    lines = status_lines(COURSE, tmp_path, lang, compact=compact, width=columns)
    assert max(width(line) for line in lines[:-1]) <= columns, "\n".join(lines)  # (the summary line: its own)
    assert len(lines) > len(COURSE.exercises) + len(COURSE.assignments) + 2  # something wrapped
    shown = "\n".join(lines)
    assert "…" not in shown and "\ufffd" not in shown
    for ex in COURSE.exercises:  # each title (and section) whole, read down its column from its row on
        rest = shown[shown.index(f" {ex.id} "):]
        texts = [ex.title(lang)] + ([ex.section(lang)] if compact else [])
        assert all(_in_order("".join(text.split()), "".join(rest.split())) for text in texts), (ex.id, shown)


def _in_order(needle: str, hay: str) -> bool:
    """Every character of `needle` in `hay`, in order (other columns' text in between)."""
    found = iter(hay)
    return all(ch in found for ch in needle)


def test_status_shows_the_best_attempt_beside_the_last(tmp_path):
    """A better attempt, then a worse one: status showed only the last (2/4)."""
    record_attempt(tmp_path, [result(FIRST, [True, False])])
    record_attempt(tmp_path, [result(FIRST, [True, True])])
    record_attempt(tmp_path, [result(FIRST, [False, False])])
    row = next(r for r in progress_of(COURSE, tmp_path) if r.exercise.id == FIRST)
    assert row.score == 0 and row.best_score == 4 and row.state == FAILED and row.best_time
    out = run("--lang", "en", "status", "--submission", str(tmp_path), "--no-color").output
    head = next(l for l in out.splitlines() if "exercise" in l and "title" in l)
    assert head.split()[-3:] == ["last", "best", "graded"]
    line = next(l for l in out.splitlines() if FIRST in l)
    points = COURSE.exercise(FIRST).points
    assert re.search(rf"\b0/{points}\s+4/{points} \(\d\d-\d\d \d\d:\d\d\)", line), line
    record_attempt(tmp_path, [result(FIRST, [True, True])])  # as good as the best: the last is the best
    line = next(l for l in run("--lang", "en", "status", "--submission", str(tmp_path)).output.splitlines()
                if FIRST in l)
    assert re.search(rf"\b4/{points}\s+4/{points}\s+\d\d-\d\d", line), line


def test_a_record_of_an_older_kit_is_its_own_best(tmp_path):
    save_state(tmp_path, {"exercises": {FIRST: {"status": "failed", "score": 3, "max_score": 4,
                                                "time": "2026-01-02 03:04:05", "at": 1.0}}})
    row = next(r for r in progress_of(COURSE, tmp_path) if r.exercise.id == FIRST)
    assert row.best_score == 3 and row.best_time == ""
    record_attempt(tmp_path, [result(FIRST, [False, False])])
    row = next(r for r in progress_of(COURSE, tmp_path) if r.exercise.id == FIRST)
    assert row.score == 0 and row.best_score == 3 and row.best_time == "2026-01-02 03:04"


def test_status_with_a_missing_folder_is_a_usage_error(tmp_path):
    res = CliRunner().invoke(main, ["status", "--submission", str(tmp_path / "nope")])
    assert res.exit_code == 2


def test_a_corrupt_state_file_is_not_fatal(tmp_path):
    (tmp_path / STATE_FILE).write_text("{not json", encoding="utf-8")
    assert load_state(tmp_path) == {}
    assert run("status", "--submission", str(tmp_path)).exit_code == 0
    save_state(tmp_path, {"exercises": []})
    assert run("status", "--submission", str(tmp_path)).exit_code == 0


def test_hint_gives_the_next_level_each_time(tmp_path):
    hints = ladder(COURSE.exercise(FIRST))
    total = len(hints)
    seen = []
    for _ in range(total + 1):
        out = run("--lang", "en", "hint", FIRST, "--submission", str(tmp_path)).output
        seen.append(int(re.search(rf"{FIRST} hint (\d+)/{total}", out).group(1)))
        assert hints[seen[-1] - 1]("en") in out
    assert seen == list(range(1, total + 1)) + [total]
    assert "last hint" in out
    assert json.loads((tmp_path / STATE_FILE).read_text())["hints"][FIRST] == total


def test_the_hint_a_diagnosis_names_is_a_command_that_works(tmp_path):
    """The report says `grade hint ex01 --level 2`; that command shows level 2."""
    total = len(ladder(COURSE.exercise(FIRST)))
    level = min(2, total)
    for lang in ("zh", "en"):
        command = re.search(r"grade (hint .*)$", say("see_hint", lang, id=FIRST, level=level)).group(1).split()
        out = run("--lang", lang, *command, "--submission", str(tmp_path)).output
        assert f"{FIRST} " in out and f"{level}/{total}" in out
    # the next plain `grade hint` goes on from the highest level seen
    out = run("--lang", "en", "hint", FIRST, "--submission", str(tmp_path)).output
    assert f"hint {min(level + 1, total)}/" in out


def test_a_hint_level_that_does_not_exist_is_a_usage_error(tmp_path):
    res = CliRunner().invoke(main, ["--lang", "en", "hint", FIRST, "--level", "9", "--submission", str(tmp_path)])
    assert res.exit_code == 2 and "hint levels 1 to" in res.output
    res = CliRunner().invoke(main, ["hint", "ex99"])
    assert res.exit_code == 2


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and links")
def test_a_progress_file_that_is_not_a_file_is_never_opened_or_written_through(tmp_path):
    """A FIFO (would block), a link to /dev/zero (would fill memory), a folder that is a link
    (a submission the grader refuses): no record read, nothing written through the link."""
    from grader.student.progress import STATE_FILE, load_state, save_state

    own = tmp_path / "exercises"
    own.mkdir()
    os.mkfifo(own / STATE_FILE)
    assert load_state(own) == {}  # returns at once
    (own / STATE_FILE).unlink()
    (own / STATE_FILE).symlink_to("/dev/zero")
    assert load_state(own) == {}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere)
    save_state(linked, {"ex01": {"state": "passed"}})
    assert list(elsewhere.iterdir()) == [] and load_state(linked) == {}
