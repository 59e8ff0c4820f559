"""Hints in levels: `grade hint ex03` shows the next level each time it is asked.

The level reached per exercise is kept in the student's progress file (grader.progress).
"""

from __future__ import annotations

from pathlib import Path

from grader.course import Exercise
from grader.messages import say
from grader.progress import load_state as _load
from grader.progress import save_state as _save


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
