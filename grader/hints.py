"""Hints in levels: `grade hint ex03` shows the next level each time it is asked.

The level reached per exercise is kept in `.grade-state.json` in the student's folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.course import Exercise
from grader.messages import say

STATE_FILE = ".grade-state.json"


def _load(state_dir: Path) -> dict:
    try:
        return json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _save(state_dir: Path, state: dict) -> None:
    path = state_dir / STATE_FILE
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only folder only loses the hint level


def next_hint(ex: Exercise, lang: str, *, level: int | None = None, state_dir: Path) -> str:
    """The text of the next hint level for `ex` (or of `level`), and remember it."""
    state = _load(state_dir)
    shown = state.setdefault("hints", {}).get(ex.id, 0)
    chosen = level if level is not None else min(shown + 1, len(ex.hints))
    chosen = max(1, min(chosen, len(ex.hints)))
    state["hints"][ex.id] = max(shown, chosen)
    _save(state_dir, state)
    lines = [say("hint_header", lang, id=ex.id, level=chosen, total=len(ex.hints)), ex.hints[chosen - 1](lang)]
    if chosen == len(ex.hints):
        lines.append(say("hint_last", lang))
    return "\n".join(lines)
