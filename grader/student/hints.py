"""Hints in levels: `grade hint ex03` shows the next level each time it is asked.

The levels go from a question about what the check said, through what to reread (the
exercise's `hints.toml`), to the last level: the fix of each known mistake, built from the
mistakes' own `fix` (a diagnosis never prints it; a student release, which holds no mistakes,
has it written into its hints.toml). A diagnosis points below the last level.

`grade hint ex03 --level 2` shows level 2 (the level a diagnosed mistake points to: the
report prints `提示：grade hint ex03 --level 2`). The level reached per exercise is kept in
the student's progress file (grader.student.progress), so the next plain `grade hint ex03` goes on
from the highest level seen.
"""

from __future__ import annotations

from pathlib import Path

from grader.model.course import Exercise, Text
from grader.model.messages import say
from grader.student.progress import load_state as _load
from grader.student.progress import save_state as _save


def ladder(ex: Exercise) -> tuple[Text, ...]:
    """Every level of the exercise's hints: the written ones, then the fixes."""
    if ex.fixes is not None:
        return (*ex.hints, ex.fixes)
    from grader.judge.mistakes import fixes_level, mistakes_for

    level = fixes_level(mistakes_for(ex.id))
    return (*ex.hints, Text(**level)) if level else ex.hints


def level_seen(ex: Exercise, state_dir: Path) -> int:
    """The highest hint level the student has seen for `ex` (0: none yet)."""
    hints = _load(state_dir).get("hints", {})
    seen = hints.get(ex.id, 0) if isinstance(hints, dict) else 0
    return seen if isinstance(seen, int) and seen >= 0 else 0


def next_hint(ex: Exercise, lang: str, *, level: int | None = None, state_dir: Path) -> str:
    """The text of the next hint level for `ex` (or of `level`), and remember it.

    `level` outside 1..len(ladder(ex)) is clamped (the command line rejects it first).
    """
    hints = ladder(ex)
    state = _load(state_dir)
    if not isinstance(state.get("hints"), dict):
        state["hints"] = {}
    shown = level_seen(ex, state_dir)
    total = len(hints)
    chosen = level if level is not None else min(shown + 1, total)
    chosen = max(1, min(chosen, total))
    state["hints"][ex.id] = max(shown, chosen)
    _save(state_dir, state)
    lines = [say("hint_header", lang, id=ex.id, level=chosen, total=total), hints[chosen - 1](lang)]
    if chosen == total:
        lines.append(say("hint_last", lang))
    else:
        lines.append(say("hint_more", lang, id=ex.id, level=chosen + 1))
    return "\n".join(lines)
