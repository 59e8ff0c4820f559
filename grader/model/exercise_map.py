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
    grader/per_exercise/ex05/fixtures.py    a fixed object both its checks and its probes build,
                                            when they import it
    course.toml [[exercises]] id = "ex05"   title, section, time limit, the earlier pieces it uses

    >>> files_of(course, course.exercise("ex05")).probes
    PosixPath('.../grader/per_exercise/ex05/probes.py')

`grade check` uses `missing_files` and `orphan_files` to fail on a missing per-exercise file
and on a file no exercise claims, as rustlings' `dev check` does. A probes.py no check names and
a fixtures.py nothing imports are claimed by no one: what an exercise needs is read from its
checks (and probes), so a file it needs and lacks is missing, and one it does not need is stray.
"""

from __future__ import annotations

import ast
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
    probes: Path | None  # None: the checks name no probe of its own, only grader/probes/common.py's
    fixtures: Path | None  # None: neither its checks nor its probes import fixtures of its own
    pieces: tuple[str, ...]  # correct earlier pieces its probes put in place (grader.pieces)

    def required(self) -> list[Path]:
        """Every file of the exercise: each must exist, and no other file is its."""
        return [p for p in (self.stub, self.solution, self.checks, self.hints, self.probes, self.fixtures)
                if p is not None]


def probes_named(checks: Path) -> set[str]:
    """The probes a checks module names, `probe("ex05.loss_and_grad")` -> {"ex05.loss_and_grad"}."""
    try:
        source = checks.read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(re.findall(r"""probe\(\s*["']([\w.]+)["']""", source))


def imports_module(path: Path, module: str) -> bool:
    """Whether the Python file at `path`, a file of `module`'s package, imports `module` (read with
    `ast`: nothing runs); a file that is missing or does not parse imports nothing.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "checks.py"
    >>> _ = f.write_text("from grader.per_exercise.ex04.fixtures import MixModel\\n")
    >>> imports_module(f, "grader.per_exercise.ex04.fixtures"), imports_module(f, "grader.per_exercise.ex05.fixtures")
    (True, False)
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return False
    package = module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level <= 1:
            # `from .fixtures import X` and `from . import fixtures`: relative to the file's own package
            base = ".".join(filter(None, [package if node.level else "", node.module or ""]))
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        if module in names:
            return True
    return False


def files_of(course, ex) -> ExerciseFiles:
    unit = course.unit(ex.id)
    checks = unit / "checks.py"
    probes = unit / "probes.py"
    own_probes = any(p.startswith(f"{ex.id}.") for p in probes_named(checks))
    fixtures_module = f"grader.per_exercise.{ex.id}.fixtures"
    own_fixtures = any(imports_module(p, fixtures_module) for p in (checks, probes))
    return ExerciseFiles(
        id=ex.id, stub=course.exercises_dir / ex.file, solution=course.solutions_dir / ex.file, checks=checks,
        hints=unit / "hints.toml", probes=probes if own_probes else None,
        fixtures=unit / "fixtures.py" if own_fixtures else None, pieces=ex.pieces)


def missing_files(course, ex) -> list[Path]:
    """The exercise's files that should exist and do not."""
    return [p for p in files_of(course, ex).required() if not p.is_file()]


def orphan_files(course) -> list[Path]:
    """Files in exercises/ and solutions/, and files in grader/per_exercise/, that no exercise
    claims (a folder of no exercise: each file in it, or the folder when it holds none)."""
    claimed = {p.resolve() for ex in course.exercises for p in files_of(course, ex).required()}
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
            if not unit.is_dir():
                found.append(unit)
                continue
            if unit.name not in ids:
                found += [p for p in sorted(unit.iterdir()) if p.name != "__pycache__"] or [unit]
                continue
            found += [p for p in sorted(unit.iterdir()) if p.name not in _UNIT_SHARED and p.resolve() not in claimed]
    return found
