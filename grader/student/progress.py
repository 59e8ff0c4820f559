"""The student's progress, kept in `.grade-state.json` in their exercises folder.

`grade exNN` (and `grade watch`) records each attempt (state, points, time); `grade hint`
records the hint level reached; `grade status` and `grade list` show it:

    ex01  训练窗口：输入与右移一位的目标      通过     10/10  2026-11-29 21:20
    ex02  负对数似然                          未通过    3/8   2026-11-29 21:24
    ex03  参数预算                            未开始    -/12

An exercise is 未开始 (not started) until an attempt implements something, 未通过
(failed) while a check fails, 通过 (passed) when every check passes.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from grader.model.files import atomic_write

import click

STATE_FILE = ".grade-state.json"

NOT_STARTED, FAILED, PASSED = "not_started", "failed", "passed"


STATE_CAP = 1024 * 1024  # bytes: the record of 13 exercises is a few KB


def load_state(folder: Path) -> dict:
    """The progress record; {} when there is none, or it is not one this kit wrote: a link, a
    FIFO (never opened blocking), a file over `STATE_CAP`, in a folder that is itself a link
    (a submission the grader refuses is not read through, nor written into)."""
    from grader.cohort.capped import read_capped

    if os.path.islink(folder):
        return {}
    data = read_capped(str(Path(folder) / STATE_FILE), STATE_CAP)
    try:
        state = json.loads(data.decode("utf-8")) if data is not None else {}
    except (ValueError, RecursionError):
        return {}
    return state if isinstance(state, dict) else {}


def save_state(folder: Path, state: dict) -> None:
    if os.path.islink(folder):
        return  # written nowhere but the student's own folder
    try:
        atomic_write(Path(folder) / STATE_FILE, json.dumps(state, ensure_ascii=False, indent=1))
    except OSError:
        pass  # a read-only folder only loses the progress record


def record_attempt(folder: Path, results) -> None:
    """Remember, per exercise, the last attempt's status, points and time."""
    state = load_state(folder)
    attempts = state.setdefault("exercises", {})
    if not isinstance(attempts, dict):
        attempts = state["exercises"] = {}
    now = time.time()
    for result in results:
        attempts[result.exercise.id] = {
            "status": result.status, "score": result.score, "max_score": result.max_score,
            "time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)), "at": now,
        }
    save_state(folder, state)


@dataclass(frozen=True)
class Progress:
    """One exercise's line in `grade status`."""

    exercise: object  # grader.course.Exercise
    state: str  # not_started | failed | passed
    score: int | None
    max_score: int
    time: str  # "" when never attempted
    changed: bool  # the file was saved after the last attempt

    @property
    def done(self) -> bool:
        return self.state == PASSED


def state_of(record: dict | None) -> str:
    """未开始 / 未通过 / 通过 from a recorded attempt (None: never attempted)."""
    if not isinstance(record, dict):
        return NOT_STARTED
    status = record.get("status")
    if status == "passed":
        return PASSED
    if status in ("not_implemented", None):
        return NOT_STARTED
    return FAILED


def progress_of(course, folder: Path) -> list[Progress]:
    """Every exercise of the course, in order, with its recorded state."""
    attempts = load_state(folder).get("exercises", {})
    attempts = attempts if isinstance(attempts, dict) else {}
    rows = []
    for ex in course.exercises:
        record = attempts.get(ex.id)
        state = state_of(record)
        changed = False
        if isinstance(record, dict) and isinstance(record.get("at"), (int, float)):
            try:
                changed = (Path(folder) / ex.file).stat().st_mtime > record["at"] + 0.5
            except OSError:
                pass
        score = record.get("score") if isinstance(record, dict) and state != NOT_STARTED else None
        rows.append(Progress(ex, state, score if isinstance(score, int) else None, ex.points,
                             str(record.get("time", ""))[:16] if isinstance(record, dict) else "", changed))
    return rows


def next_unfinished(rows: list[Progress], after: str | None = None) -> str | None:
    """The first exercise not passed after `after` (wrapping around); None when all passed."""
    ids = [r.exercise.id for r in rows]
    start = ids.index(after) + 1 if after in ids else 0
    for r in rows[start:] + rows[:start]:
        if not r.done and r.exercise.id != after:
            return r.exercise.id
    return None


def label(state: str, lang: str) -> str:
    from grader.model.messages import say

    return say(f"status_{state}", lang)


def status_lines(course, folder: Path, lang: str, *, color: bool = False, compact: bool = False,
                 current: str | None = None) -> list[str]:
    """The progress table: one line per exercise, then a summary line.

    `compact` leaves out the time (for `grade list`, which shows the section instead).
    """
    from grader.model.messages import say, section_text
    from grader.report.layout import pad

    rows = progress_of(course, folder)
    style = (lambda t, **kw: click.style(t, **kw)) if color else (lambda t, **kw: t)
    colors = {PASSED: "green", FAILED: "red", NOT_STARTED: None}
    marks = {PASSED: "✓", FAILED: "✗", NOT_STARTED: "·"}
    lines = []
    for assignment in course.assignments:
        mine = [r for r in rows if r.exercise.assignment == assignment.id]
        if not mine:
            continue
        lines.append(style(f"[{assignment.id}] {assignment.title(lang)}", bold=True))
        for r in mine:
            ex = r.exercise
            pointer = "▶ " if ex.id == current else "  "
            state = style(pad(f"{marks[r.state]} {label(r.state, lang)}", 14), fg=colors[r.state])
            points = f"{r.score if r.score is not None else '-'}/{r.max_score}"
            line = f"{pointer}{ex.id}  {pad(_cut(ex.title(lang), 36), 38)}{state}{points:>6}"
            if compact:
                line += "  " + _cut(section_text(ex.section, lang), 30)
            else:
                when = r.time[5:] if r.time else say("never", lang)  # "11-29 21:26": short enough for 80 columns
                if r.changed:
                    when += " " + say("changed_since", lang)
                line += "  " + when
            lines.append(line)
    done = sum(1 for r in rows if r.done)
    score = sum(r.score or 0 for r in rows)
    possible = sum(r.max_score for r in rows)
    lines.append(say("progress_summary", lang, done=done, total=len(rows), score=score, possible=possible,
                     bar=bar(done, len(rows))))
    return lines


def bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "█" * filled + "░" * (width - filled)


def _cut(text: str, n: int) -> str:
    from grader.report.layout import width

    if width(text) <= n:
        return text
    out = ""
    for ch in text:
        if width(out + ch) > n - 1:
            break
        out += ch
    out += "…"
    return out + "”" if out.count("“") > out.count("”") else out  # a shortened quote still closes


def student_folder(submission: Path | None) -> Path:
    """Where the progress is kept: --submission, else ./exercises, else the current folder."""
    if submission:
        return Path(submission)
    folder = Path.cwd() / "exercises"
    return folder if folder.is_dir() else Path.cwd()


