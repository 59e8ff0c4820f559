"""`grade watch`: driven through a pseudo-terminal, as a student's terminal would.

No timing assertions (bench/bench_watch.py measures the latency).
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import sys
import termios
import time
from pathlib import Path

import pytest

from grader.model.course import load_course

COURSE = load_course()
EX = COURSE.exercise("ex01")
RIGHT = (COURSE.solutions_dir / EX.file).read_text(encoding="utf-8")
WRONG = RIGHT.replace("while i + block_size + 1 <= len(tokens):", "while i + block_size + 1 < len(tokens):")


class Terminal:
    """A child process on a pty: read until a pattern shows, send keys."""

    def __init__(self, argv: list[str], cwd: Path, columns: int = 80):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.environ.pop("GRADE_LANG", None)
            os.environ.pop("COLUMNS", None)
            os.execv(argv[0], argv)
        import fcntl
        import struct

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.seen = bytearray()

    @property
    def text(self) -> str:
        return self.seen.decode("utf-8", "ignore")

    def expect(self, pattern: str, timeout: float = 90.0, since: int = 0) -> re.Match:
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            found = regex.search(self.seen[since:].decode("utf-8", "ignore"))
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} not shown; the terminal shows:\n{self.text[-3000:]}")
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    time.sleep(0.05)
                self.seen += chunk

    def mark(self) -> int:
        return len(self.seen)

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if ready:
                    self.seen += os.read(self.fd, 65536)
            except OSError:
                time.sleep(0.05)
        raise AssertionError("grade watch did not exit:\n" + self.text[-2000:])

    def close(self) -> None:
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


@pytest.fixture
def student(tmp_path):
    folder = tmp_path / "exercises"
    shutil.copytree(COURSE.exercises_dir, folder, ignore=shutil.ignore_patterns(".grade*", "__pycache__"))
    return folder


def watch_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", "from grader.commands.main import entry; entry()", *args]


def test_watch_regrades_on_save_moves_on_and_restores_the_terminal(student):
    term = Terminal(watch_argv("--lang", "en", "watch", "ex01", "--no-color"), student.parent)
    try:
        saved_mode = termios.tcgetattr(term.fd)  # before grade watch switches to cbreak
        term.expect(r"graded in [0-9.]+ s")
        assert "not implemented yet" in term.text
        assert "h hint" in term.text  # the keys are offered: stdin is a terminal

        mark = term.mark()
        (student / EX.file).write_text(WRONG, encoding="utf-8")
        term.expect(r"graded in [0-9.]+ s", since=mark)
        shown = term.seen[mark:].decode("utf-8", "ignore")
        assert "diagnosis" in shown and "grade hint ex01 --level" in shown

        mark = term.mark()
        term.send(b"h")  # the hint the diagnosis pointed to
        term.expect(r"ex01 hint \d/\d", since=mark)

        mark = term.mark()
        term.send(b"l")
        term.expect(r"progress \d+/\d+", since=mark)
        assert "failed" in term.seen[mark:].decode()

        mark = term.mark()
        (student / EX.file).write_text(RIGHT, encoding="utf-8")
        found = term.expect(r"ex01 passed! Next: (ex\d\d)", since=mark)
        assert found.group(1) == "ex02"

        term.send(b"q")
        term.expect(r"left grade watch")
        assert term.wait() == 0
        mode = termios.tcgetattr(term.fd)
        assert mode[3] & termios.ICANON and mode[3] & termios.ECHO  # cbreak undone
        assert mode[3] == saved_mode[3]
    finally:
        term.close()
    state = (student / ".grade-state.json").read_text(encoding="utf-8")
    assert '"passed"' in state


def test_unknown_exercise_is_a_usage_error(student):
    from click.testing import CliRunner

    from grader.commands.main import main

    result = CliRunner().invoke(main, ["--lang", "en", "watch", "ex99", "--submission", str(student)])
    assert result.exit_code == 2
    assert "unknown exercise ex99" in result.output


def test_a_save_grades_the_exercises_saved():
    from grader.student.watch import WatchLoop

    loop = WatchLoop.__new__(WatchLoop)
    loop.course = COURSE
    loop.current = "ex01"
    ids = [e.id for e in COURSE.exercises]
    other, third = COURSE.exercise(ids[1]), COURSE.exercise(ids[2])
    assert loop.exercises_of({EX.file}) == ["ex01"]
    assert loop.exercises_of({other.file}) == [other.id]
    assert loop.exercises_of({"helpers.py"}) == ["ex01"]  # a file the exercise may import
    assert loop.exercises_of({third.file, EX.file, other.file}) == ["ex01", other.id, third.id]  # every one
    assert loop.exercises_of({"helpers.py", EX.file}) == ["ex01"]


def test_first_exercise_is_the_first_not_passed(tmp_path):
    from grader.student.progress import save_state
    from grader.student.watch import first_exercise

    assert first_exercise(COURSE, tmp_path) == COURSE.exercises[0].id
    first = COURSE.exercises[0].id
    save_state(tmp_path, {"exercises": {first: {"status": "passed", "score": 1, "max_score": 1, "time": ""}}})
    assert first_exercise(COURSE, tmp_path) == COURSE.exercises[1].id


LOOPING = RIGHT.replace("    windows = []", "    while True:\n        pass\n    windows = []", 1)


def test_a_save_while_a_loop_runs_cancels_the_grade_at_once_and_h_after_the_pass_gives_its_hint(student):
    """A save while a check loops cancels that grade and grades the new file. After ex01 passed,
    `h` once gave ex02's hint (the exercise announced next) under ex01's result."""
    (student / EX.file).write_text(LOOPING, encoding="utf-8")
    term = Terminal(watch_argv("--lang", "en", "watch", "ex01", "--no-color"), student.parent)
    try:
        term.expect(r"… make_windows: the two windows")  # the running check is named
        mark = term.mark()
        (student / EX.file).write_text(RIGHT, encoding="utf-8")
        term.expect(r"saved again: grading the new version", since=mark)
        found = term.expect(r"graded in [0-9.]+ s", since=mark)
        shown = term.seen[mark:].decode("utf-8", "ignore")
        # the new file's grade, not the loop's: no time-out was waited out or shown
        assert "timed out" not in shown and "10/10" in shown, shown
        assert found
        term.expect(r"ex01 passed! Next: ex02", since=mark)

        mark = term.mark()  # h after a pass: the hint of the exercise on screen, not of the one announced next
        term.send(b"h")
        term.expect(r"ex\d\d hint \d/\d", since=mark)
        shown = term.seen[mark:].decode("utf-8", "ignore")
        assert "ex01 hint 1/" in shown and "ex02 hint" not in shown, shown
        term.send(b"q")
        assert term.wait() == 0
    finally:
        term.close()
    # the cancelled grade left no attempt behind: the one recorded is the passing one
    assert '"passed"' in (student / ".grade-state.json").read_text(encoding="utf-8")


def test_watch_shows_what_grade_shows_never_a_hidden_checks_values(tmp_path):
    """`grade watch` rendered the checks without the student's view: a hidden check's input,
    expected value and output were on screen (an independent tester, 2026-12-04)."""
    from grader.report.render import render
    from grader.student.watch_session import WatchSession

    folder = tmp_path / "exercises"
    shutil.copytree(COURSE.exercises_dir, folder, ignore=shutil.ignore_patterns(".grade*", "__pycache__"))
    (folder / EX.file).write_text(WRONG, encoding="utf-8")
    session = WatchSession(COURSE, folder, "en").start()
    try:
        results = session.grade("ex01")
        shown = session.render(results, color=False)
    finally:
        session.close()
    hidden = [c for r in results for c in r.checks if not c.public and not c.passed and c.finding]
    assert hidden, "the wrong answer fails a hidden check"
    assert shown == render(results, "text", "en")
    for check in hidden:
        assert check.finding.expected is None or repr(check.finding.expected) not in shown


SECOND = COURSE.exercise("ex02")
SECOND_RIGHT = (COURSE.solutions_dir / SECOND.file).read_text(encoding="utf-8")
# ex01 that takes a while on the lesson's example (ex12 trains for minutes): saved over
# while it runs (the worker grades a copy of the file as it was when the grade began)
SLOW = RIGHT.replace("    windows = []", """    if block_size == 3 and len(tokens) == 5:
        import time
        time.sleep(5)
    windows = []""", 1)


def test_another_exercise_saved_while_one_grades_waits_and_both_are_shown_and_recorded(student):
    """Saving ex13 while ex12 graded (two minutes) dropped ex12's run without a word, and
    `grade status` kept its old score: now the running grade finishes, its result is shown
    and recorded, then the saved exercise is graded below it."""
    assert SLOW != RIGHT
    (student / EX.file).write_text(SLOW, encoding="utf-8")
    term = Terminal(watch_argv("--lang", "en", "watch", "ex01", "--no-color"), student.parent)
    try:
        term.expect(r"… make_windows")  # ex01 is grading, its first check slow
        mark = term.mark()
        (student / SECOND.file).write_text(SECOND_RIGHT, encoding="utf-8")
        term.expect(r"ex02 saved: graded once ex01 is done", since=mark)
        first = term.expect(r"ex01 passed! Next: ex02", since=mark)
        term.expect(r"grading ex02", since=mark + first.end())
        term.expect(r"ex02 passed!", since=mark + first.end())
        shown = term.seen[mark:].decode("utf-8", "ignore")
        assert "saved again" not in shown  # ex01's run was not dropped
        assert re.search(rf"ex01 .*{EX.points}/{EX.points}", shown) and re.search(
            rf"ex02 .*{SECOND.points}/{SECOND.points}", shown), shown
        assert len(re.findall(r"graded in [0-9.]+ s", shown)) == 2
        # both results still on screen: the second grade did not clear the first away
        assert shown.rfind("\x1b[2J") < shown.find("ex01 passed!")

        mark = term.mark()
        term.send(b"h")  # the hint of the exercise on screen: ex02, the one just graded
        term.expect(r"ex02 hint \d/\d", since=mark)
        term.send(b"q")
        assert term.wait() == 0
    finally:
        term.close()
    from grader.student.progress import load_state

    recorded = load_state(student)["exercises"]
    assert recorded["ex01"]["status"] == "passed" and recorded["ex01"]["score"] == EX.points
    assert recorded["ex02"]["status"] == "passed" and recorded["ex02"]["score"] == SECOND.points


def test_a_long_chinese_line_wraps_between_characters_never_inside_one_and_ctrl_c_quits_cleanly(student):
    """A Chinese diagnosis longer than the terminal: wrapped by the kit at a character
    boundary (the terminal cut one in two where its own wrapping fell), each row within
    the width, the indent kept. Then Ctrl-C through the terminal leaves cleanly."""
    term = Terminal(watch_argv("--lang", "zh", "watch", "ex01", "--no-color"), student.parent, columns=50)
    try:
        term.expect(r"评分用时")
        mark = term.mark()
        (student / EX.file).write_text(WRONG, encoding="utf-8")
        term.expect(r"评分用时", since=mark)
        term.send(b"h")
        term.expect(r"ex01 提示 \d/\d", since=mark)
        term.expect(r"下一级|最后一级", since=mark)
        shown = term.seen[mark:].decode("utf-8")  # strict: a character cut in two would not decode
        term.send(b"\x03")  # Ctrl-C through the terminal: SIGINT
        term.expect(r"已退出 grade watch", since=mark)
        assert term.wait() == 0
        assert termios.tcgetattr(term.fd)[3] & termios.ECHO
        assert "Traceback" not in term.text
    finally:
        term.close()
    from grader.report.layout import width

    # the terminal's rows: a progress line drawn over (\r) counts as what was drawn last
    rows = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", row).split("\r")[-1]
            for row in shown.replace("\r\n", "\n").split("\n")]
    assert max(width(row) for row in rows) <= 50, [row for row in rows if width(row) > 50]
    assert any(row.startswith("      ") and HAN.search(row) for row in rows), rows  # a wrapped diagnosis, indented


HAN = re.compile(r"[\u4e00-\u9fff]")
