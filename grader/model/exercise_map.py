"""From an exercise id, every file that belongs to it; and every file that belongs to none.

One naming key links them all: the id `exNN` (course.toml) and the file stem `exNN_name`.

    exercises/ex05_tinygpt_loss.py        the stub the student edits
    solutions/ex05_tinygpt_loss.py        the reference (same names and signatures)
    grader/checks/test_ex05_tinygpt_loss.py   the checks (pytest; hidden unless @public)
    grader/probes/ex05.py                 what runs student code in the worker (only if the
                                          checks call probe("ex05.…"); else probes/common.py)
    grader/mistakes/ex05.py               the known mistakes, each a variant of the reference
    course.toml [[exercises]] id="ex05"   title, section, points, time limit, hints
    grader/pieces/…                       correct earlier pieces it builds on (ex10–ex12)

    >>> files_of(course, course.exercise("ex05")).probes
    PosixPath('.../grader/probes/ex05.py')

`grade check` uses `missing_files` and `orphan_files` to fail on a missing per-exercise file
and on a file no exercise claims, as rustlings' `dev check` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from grader.model.paths import PACKAGE_DIR

# Files in a student's folder that are the kit's own, not stray exercises.
_STUDENT_STATE = {".grade-state.json", ".grade", "__pycache__", ".ipynb_checkpoints"}
_SHARED_PROBES = {"__init__.py", "common.py", "errors.py", "seeding.py"}  # shared by every probe module


@dataclass(frozen=True)
class ExerciseFiles:
    id: str
    stub: Path
    solution: Path
    checks: Path
    probes: Path | None  # None: the checks need only grader/probes/common.py
    mistakes: Path
    pieces: tuple[str, ...]  # names of grader/pieces modules its probes put in place

    def required(self) -> list[Path]:
        return [p for p in (self.stub, self.solution, self.checks, self.probes, self.mistakes) if p is not None]


def _uses_own_probes(checks: Path, exercise_id: str) -> bool:
    try:
        source = checks.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(rf"""probe\(\s*["']{exercise_id}\.""", source) is not None


def files_of(course, ex) -> ExerciseFiles:
    from grader.pieces import needed_by

    checks = course.checks_dir / ex.check_module
    probes = PACKAGE_DIR / "probes" / f"{ex.id}.py"
    return ExerciseFiles(
        id=ex.id, stub=course.exercises_dir / ex.file, solution=course.solutions_dir / ex.file, checks=checks,
        probes=probes if probes.is_file() or _uses_own_probes(checks, ex.id) else None,
        mistakes=PACKAGE_DIR / "mistakes" / f"{ex.id}.py", pieces=needed_by(ex.module))


def missing_files(course, ex) -> list[Path]:
    """The exercise's files that should exist and do not."""
    return [p for p in files_of(course, ex).required() if not p.is_file()]


def orphan_files(course) -> list[Path]:
    """Files in exercises/, solutions/, checks/, probes/ or mistakes/ that no exercise claims."""
    claimed = {p.resolve() for ex in course.exercises for p in files_of(course, ex).required()}
    folders = [(course.exercises_dir, set()), (course.solutions_dir, set()),
               (course.checks_dir, {"__init__.py", "README.md"}),
               (PACKAGE_DIR / "probes", _SHARED_PROBES), (PACKAGE_DIR / "mistakes", {"__init__.py"})]
    found = []
    for folder, shared in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.name in shared or path.name in _STUDENT_STATE or path.resolve() in claimed:
                continue
            found.append(path)
    return found
