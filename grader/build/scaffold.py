"""`grade new exNN --assignment A`: every file of a new exercise, each with a worked TODO.

What it writes, so that `grade exNN --reference` and `grade check --only exNN` pass at once:

    solutions/exNN_NAME.py                the reference: one function, its body between solution markers
    exercises/exNN_NAME.py                the stub, derived from the reference (grader.build.stubs)
    grader/per_exercise/exNN/checks.py    a public check, a hidden one, and a known mistake
    grader/per_exercise/exNN/hints.toml   two written levels (the fixes level is built)
    course.toml                           an [[exercises]] table (and the [[assignments]] one when A is new)

The example is deliberately tiny (scale a tensor by a factor) and every file says what to
replace; docs/instructors/authoring.md is the guide.

    >>> paths = new_exercise(course, "ex14", assignment="attention", name="tril_average")
"""

from __future__ import annotations

import re
from pathlib import Path

from grader.build.stubs import derive_stub
from grader.model.course import Course

REFERENCE = '''"""{id} 练习：TODO 用一两句中文说任务（见 TODO 节）。

{id}: TODO say the task in a sentence or two (see section TODO). The stub students get is this
file with every solution region replaced (`grade check` proves it); the text outside the
regions (the docstrings, their worked examples, the shapes) is theirs to read.
"""

import torch


def scale(x, factor):
    """把张量 x 的每个元素乘以 factor（TODO：换成你的函数）。

    Multiply every element of x by factor (TODO: replace with your exercise's function).
    x: (B, T) float tensor; returns (B, T).

    例 / Example:
        >>> scale(torch.tensor([[1.0, 2.0]]), 3.0)
        tensor([[3., 6.]])
    """
    ### BEGIN SOLUTION
    return x * factor  # (B, T)
    ### END SOLUTION
'''

CHECKS = '''"""{id} 的检查 / the checks of {id} (TODO: what they judge, and the section they come from)."""

import pytest
import torch

from grader.judge import call, same
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("{id}")


@pytest.mark.public  # its inputs may be shown to students (the stub's example)
@pytest.mark.points(1)
def test_course_example(student, reference):
    """scale：课本的例子 | scale: the course's example"""
    same(student, reference, call("scale", torch.tensor([[1.0, 2.0]]), 3.0))


@pytest.mark.points(2)
def test_random_shapes(student, reference):
    """scale：随机形状与因子 | scale: random shapes and factors"""
    generator = torch.Generator().manual_seed(1)
    for shape, factor in (((2, 3), 0.5), ((4, 1), -2.0), ((1, 5), 10.0)):
        same(student, reference, call("scale", torch.randn(shape, generator=generator), factor))


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

def _scale_added(x, factor):
    return x + factor


MISTAKES = [
    Mistake(id="added_not_multiplied", section="TODO",
            zh="加上了 factor，而不是乘以它", en="factor is added, not multiplied",
            fix={{"zh": "返回 x * factor", "en": "return x * factor"}},
            overrides={{"scale": _scale_added}}, hint=1),
]
'''

HINTS = '''# {id}'s hint ladder (`grade hint {id}`): from a question about what the check said, to what
# to reread, to how to get there. The last level, the fixes, is built from the known mistakes'
# `fix` (checks.py): it is not written here.

[[level]]
zh = "检查说的是哪个输入的结果不对？把那个例子在纸上算一遍：每个元素应该变成多少？"
en = "Which input does the check say is wrong? Work that example out on paper: what should each element become?"

[[level]]
zh = "重读 TODO 节：factor 是加上去还是乘上去？"
en = "Reread section TODO: is factor added or multiplied?"
'''


class ScaffoldError(ValueError):
    """The new exercise cannot be written (its id or files exist, a bad name)."""


def new_exercise(course: Course, exercise_id: str, *, assignment: str, name: str = "exercise",
                 title: tuple[str, str] | None = None, assignment_title: tuple[str, str] | None = None) -> list[Path]:
    """Write every file of a new exercise (module docstring); the paths written, in order."""
    import tomlkit

    if not re.fullmatch(r"ex\d{2,}", exercise_id):
        raise ScaffoldError(f"an exercise id is ex followed by digits (ex14), not {exercise_id!r}")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ScaffoldError(f"--name is a Python name in lower case (tril_average), not {name!r}")
    if any(ex.id == exercise_id for ex in course.exercises):
        raise ScaffoldError(f"{exercise_id} is already in course.toml")
    file = f"{exercise_id}_{name}.py"
    unit = course.unit(exercise_id)
    targets = [course.solutions_dir / file, course.exercises_dir / file, unit / "__init__.py", unit / "checks.py",
               unit / "hints.toml"]
    existing = [p for p in targets if p.exists()]
    if existing:
        raise ScaffoldError(f"already there: {', '.join(map(str, existing))}")
    reference = REFERENCE.format(id=exercise_id)
    unit.mkdir(parents=True)
    texts = [reference, derive_stub(reference, exercise_id),
             f'"""{exercise_id}: what the grader needs about it, in one place."""\n',
             CHECKS.format(id=exercise_id), HINTS.format(id=exercise_id)]
    for path, text in zip(targets, texts):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    path = course.root / "course.toml"
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    if not any(str(a["id"]) == assignment for a in doc["assignments"]):
        zh, en = assignment_title or (f"TODO 作业标题（{assignment}）", f"TODO the assignment's title ({assignment})")
        table = tomlkit.table()
        table.add("id", assignment)
        table.add("title", _inline(zh, en))
        doc["assignments"].append(table)
    zh, en = title or ("TODO 练习标题", "TODO the exercise's title")
    table = tomlkit.table()
    table.add("id", exercise_id)
    table.add("assignment", assignment)
    table.add("file", file)
    table.add("title", _inline(zh, en))
    table.add("section", _inline("TODO 节", "section TODO"))
    table.add("timeout", 10)
    doc["exercises"].append(table)
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return [*targets, path]


def _inline(zh: str, en: str):
    import tomlkit

    table = tomlkit.inline_table()
    table.update({"zh": zh, "en": en})
    return table


def write_stubs(course: Course, ids: list[str]) -> list[Path]:
    """Write each exercise's stub from its reference (`grade check --write-stubs`); those changed."""
    changed = []
    for exercise_id in ids:
        ex = course.exercise(exercise_id)
        stub, reference = course.exercises_dir / ex.file, course.solutions_dir / ex.file
        derived = derive_stub(reference.read_text(encoding="utf-8"), ex.id)
        if not stub.is_file() or stub.read_text(encoding="utf-8") != derived:
            stub.write_text(derived, encoding="utf-8")
            changed.append(stub)
    return changed


__all__ = ["new_exercise", "write_stubs", "ScaffoldError"]
