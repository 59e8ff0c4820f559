"""The student's progress, kept in `.grade-state.json` in their exercises folder.

`grade exNN` (and `grade watch`) records each attempt (state, points, time) and keeps the
best one; `grade hint` records the hint level reached; `grade status` and `grade list` show it:

    练习      标题                                                状态      最近一次            最好一次  评分时间
    [ch05]    第 5 章 从神经网络到语言模型
      ex01    训练窗口：输入与右移一位的目标                      ✓ 通过       10/10               10/10  11-29 21:20
      ex02    手算 next-token NLL：稳定 softmax 与带 mask 的平均  ✗ 未通过      3/12  8/12 (11-29 21:02)  11-29 21:24
      ex03    参数量与显存粗估：12·L·C² 加词表                    · 未开始      -/11                -/11  还没评过

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

STATE_FILE = ".grade-state.json"

NOT_STARTED, FAILED, PASSED = "not_started", "failed", "passed"


STATE_CAP = 1024 * 1024  # bytes: the record of 13 exercises is a few KB


def load_state(folder: Path) -> dict:
    """The progress record; {} when there is none, or it is not one this kit wrote: a link, a
    FIFO (never opened blocking), a file over `STATE_CAP`, in a folder that is itself a link
    (a submission the grader refuses is not read through, nor written into)."""
    from grader.model.files import read_capped

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
    """Remember, per exercise, the last attempt (status, points, time) and the best one.

    The best is the attempt with the most points, the latest to reach them; it is kept
    under the last one's `best` key (a record an older kit wrote, without it, is its own best).
    """
    state = load_state(folder)
    attempts = state.setdefault("exercises", {})
    if not isinstance(attempts, dict):
        attempts = state["exercises"] = {}
    now = time.time()
    for result in results:
        last = {"status": result.status, "score": result.score, "max_score": result.max_score,
                "time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)), "at": now}
        best = _best_of(attempts.get(result.exercise.id))
        if best is None or result.score >= best["score"]:
            best = dict(last)
        attempts[result.exercise.id] = {**last, "best": best}
    save_state(folder, state)


def _best_of(record) -> dict | None:
    """The best attempt a record keeps (itself when it has none), or None when it holds no score."""
    if not isinstance(record, dict):
        return None
    best = record.get("best") if isinstance(record.get("best"), dict) else record
    score = best.get("score")
    return best if isinstance(score, int) and not isinstance(score, bool) else None


@dataclass(frozen=True)
class Progress:
    """One exercise's line in `grade status`: its last attempt, and its best."""

    exercise: object  # grader.course.Exercise
    state: str  # not_started | failed | passed, of the last attempt
    score: int | None
    max_score: int
    time: str  # "" when never attempted
    changed: bool  # the file was saved after the last attempt
    best_score: int | None = None  # the most points an attempt got (None: none got any yet)
    best_time: str = ""  # when, "" when the best is the last attempt

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
        when = str(record.get("time", ""))[:16] if isinstance(record, dict) else ""
        best = _best_of(record)
        best_score = best["score"] if best is not None and state_of(best) != NOT_STARTED else None
        earlier = best is not None and best is not record and best.get("at") != record.get("at")
        best_time = str(best.get("time", ""))[:16] if earlier else ""
        rows.append(Progress(ex, state, score if isinstance(score, int) else None, ex.points, when, changed,
                             best_score, best_time))
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
                 current: str | None = None, width: int | None = None) -> list[str]:
    """The progress table: a header, then per assignment its title and one row per exercise,
    then a summary line.

    `grade status` shows each exercise's state, the points of its last attempt and of its
    best, and when it was last graded; `compact` (`grade list`) shows the section of the
    course text instead of the best and the time. `width` is the terminal's: a title or a
    section too long for it wraps onto the next line (by words, or between two characters:
    never inside one); None (not a terminal) keeps every row on one line.
    """
    import click

    from grader.model.messages import say
    from grader.report.layout import columns

    rows = progress_of(course, folder)
    style = (lambda t, **kw: click.style(t, **kw)) if color else (lambda t, **kw: t)
    colors = {PASSED: "green", FAILED: "red", NOT_STARTED: None}
    marks = {PASSED: "✓", FAILED: "✗", NOT_STARTED: "·"}
    heads = ["exercise", "title", "state", "last_points"] + (["section"] if compact else ["best_points", "graded_at"])
    table = [[style(say(f"status_{h}", lang), bold=True) for h in heads]]
    for assignment in course.assignments:
        mine = [r for r in rows if r.exercise.assignment == assignment.id]
        if not mine:
            continue
        table.append([style(f"[{assignment.id}]", bold=True), style(assignment.title(lang), bold=True)])
        for r in mine:
            ex = r.exercise
            cells = [("▶ " if ex.id == current else "  ") + ex.id, ex.title(lang),
                     style(f"{marks[r.state]} {label(r.state, lang)}", fg=colors[r.state]), _points(r.score, r)]
            if compact:
                cells.append(ex.section(lang))
            else:
                best = _points(r.best_score, r) + (f" ({r.best_time[5:]})" if r.best_time else "")
                when = r.time[5:] if r.time else say("never", lang)  # "11-29 21:26": short enough for 80 columns
                if r.changed:
                    when += " " + say("changed_since", lang)
                cells += [best, when]
            table.append(cells)
    lines = columns(table, width=width, flexible={1, 4} if compact else {1, 5}, right={3} if compact else {3, 4})
    done = sum(1 for r in rows if r.done)
    score = sum(r.score or 0 for r in rows)
    possible = sum(r.max_score for r in rows)
    lines.append(say("progress_summary", lang, done=done, total=len(rows), score=score, possible=possible,
                     bar=bar(done, len(rows))))
    return lines


def _points(score: int | None, row: Progress) -> str:
    return f"{score if score is not None else '-'}/{row.max_score}"


def bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "█" * filled + "░" * (width - filled)


def student_folder(submission: Path | None) -> Path:
    """Where the progress is kept: --submission, else ./exercises, else the current folder."""
    if submission:
        return Path(submission)
    folder = Path.cwd() / "exercises"
    return folder if folder.is_dir() else Path.cwd()


