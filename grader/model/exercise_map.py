"""From an exercise id, every file that belongs to it; and every file that belongs to none.

The id `exNN` (course.toml) names the exercise's folder, and its `file` names the stub and the
reference:

    exercises/ex05_tinygpt_loss.py          the stub the student edits (derived from the reference)
    solutions/ex05_tinygpt_loss.py          the reference, its solution regions marked
    grader/per_exercise/ex05/checks.py      the checks (pytest; hidden unless @public) and, below
                                            them, the known mistakes (`MISTAKES`)
    grader/per_exercise/ex05/hints.toml     the hint ladder (its last level, the fixes, is built)
    grader/per_exercise/ex05/probes.py      what runs student code in the worker, when the checks
                                            call probe("ex05.…") (else grader/probes/common.py)
    grader/per_exercise/ex05/fixtures.py    a fixed object both its checks and its probes build
    course.toml [[exercises]] id = "ex05"   title, section, time limit, the earlier pieces it uses

    >>> files_of(course, course.exercise("ex05")).probes
    PosixPath('.../grader/per_exercise/ex05/probes.py')

`grade check` uses `missing_files` and `orphan_files` to fail on a missing per-exercise file
and on a file no exercise claims, as rustlings' `dev check` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# Files in a student's folder that are the kit's own, not stray exercises.
_STUDENT_STATE = {".grade-state.json", ".grade", "__pycache__", ".ipynb_checkpoints"}
# What an exercise's folder may hold besides what files_of names.
_UNIT_SHARED = {"__init__.py", "__pycache__"}
_UNITS_SHARED = {"__init__.py", "README.md", "__pycache__"}


@dataclass(frozen=True)
class ExerciseFiles:
    id: str
    stub: Path
    solution: Path
    checks: Path  # the checks and the known mistakes
    hints: Path
    probes: Path | None  # None: the checks need only grader/probes/common.py
    fixtures: Path | None  # None: none shared by its checks and probes
    pieces: tuple[str, ...]  # correct earlier pieces its probes put in place (grader.pieces)

    def required(self) -> list[Path]:
        return [p for p in (self.stub, self.solution, self.checks, self.hints, self.probes) if p is not None]

    def owned(self) -> list[Path]:
        """Every file of the exercise that exists or must."""
        return [*self.required(), *([self.fixtures] if self.fixtures is not None else [])]


def probes_named(checks: Path) -> set[str]:
    """The probes a checks module names, `probe("ex05.loss_and_grad")` -> {"ex05.loss_and_grad"}."""
    try:
        source = checks.read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(re.findall(r"""probe\(\s*["']([\w.]+)["']""", source))


def files_of(course, ex) -> ExerciseFiles:
    unit = course.unit(ex.id)
    checks = unit / "checks.py"
    probes = unit / "probes.py"
    own_probes = probes.is_file() or any(p.startswith(f"{ex.id}.") for p in probes_named(checks))
    fixtures = unit / "fixtures.py"
    return ExerciseFiles(
        id=ex.id, stub=course.exercises_dir / ex.file, solution=course.solutions_dir / ex.file, checks=checks,
        hints=unit / "hints.toml", probes=probes if own_probes else None,
        fixtures=fixtures if fixtures.is_file() else None, pieces=ex.pieces)


def missing_files(course, ex) -> list[Path]:
    """The exercise's files that should exist and do not."""
    return [p for p in files_of(course, ex).required() if not p.is_file()]


def orphan_files(course) -> list[Path]:
    """Files in exercises/ and solutions/, and folders and files in grader/per_exercise/, that no
    exercise claims."""
    claimed = {p.resolve() for ex in course.exercises for p in files_of(course, ex).owned()}
    found = []
    for folder in (course.exercises_dir, course.solutions_dir):
        if folder.is_dir():
            found += [p for p in sorted(folder.iterdir())
                      if p.name not in _STUDENT_STATE and p.resolve() not in claimed]
    if course.units_dir.is_dir():
        ids = {ex.id for ex in course.exercises}
        for unit in sorted(course.units_dir.iterdir()):
            if unit.name in _UNITS_SHARED:
                continue
            if not unit.is_dir() or unit.name not in ids:
                found.append(unit)
                continue
            found += [p for p in sorted(unit.iterdir()) if p.name not in _UNIT_SHARED and p.resolve() not in claimed]
    return found
