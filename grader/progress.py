"""The student's progress, kept in `.grade-state.json` in their exercises folder.

`grade exNN` records each attempt (state, points, time); `grade status` shows it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

STATE_FILE = ".grade-state.json"


def load_state(folder: Path) -> dict:
    try:
        state = json.loads((Path(folder) / STATE_FILE).read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def save_state(folder: Path, state: dict) -> None:
    path = Path(folder) / STATE_FILE
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only folder only loses the progress record


def record_attempt(folder: Path, results) -> None:
    """Remember, per exercise, the last attempt's status, points and time."""
    state = load_state(folder)
    attempts = state.setdefault("exercises", {})
    for result in results:
        attempts[result.exercise.id] = {
            "status": result.status, "score": result.score, "max_score": result.max_score,
            "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
    save_state(folder, state)
