"""An exercise's work under another name in a student's folder: not graded, and said.

    renamed({"EX01_windows.py": os.lstat("s/EX01_windows.py")}, course, frozenset(), inner="exercises")
    # [{"file": "EX01_windows.py", "reason": "renamed", "peer": "ex01_windows.py", "unread": True}]
"""

from __future__ import annotations

import os
import re
import stat

from grader.cohort.names import display_name
from grader.model.course import Course
from grader.sandbox.intake import SubmissionRefused

RENAMED = re.compile(r"^(ex[0-9]{2})(?![0-9])", re.IGNORECASE)  # what may be an exercise's work under another name


def renamed(listing: dict, course: Course, present: frozenset, inner: str | None) -> list[dict]:
    """An exercise's work under another name, its own file absent: not graded, and said, with
    the name the course wants. `ex01_mywindows.py`, `EX01_windows.py`, `ex01_windows.py.txt`,
    `ex01.py`; and (`inner`: at the top of a student's folder, the sub-folder the exercise files
    may be in) `Exercises/` for `exercises/`.
    `ex٠١_windows.py` (Arabic-Indic digits) is no exercise's."""
    wanted = {ex.id: ex.file for ex in course.exercises}
    found = []
    for name, info in listing.items():
        match = RENAMED.match(name)
        exercise = match.group(1).lower() if match else None
        if exercise in wanted and exercise not in present and name != wanted[exercise] \
                and not isinstance(info, SubmissionRefused):
            found.append({"file": display_name(name), "reason": "renamed", "peer": wanted[exercise], "unread": True})
        elif inner and not present and name.lower() == inner and name != inner \
                and isinstance(info, os.stat_result) and stat.S_ISDIR(info.st_mode):
            found.append({"file": display_name(name), "reason": "renamed", "peer": f"{inner}/", "unread": True})
    return found
