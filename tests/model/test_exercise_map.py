"""From an exercise id, every file of it; `grade check` fails on a missing or orphaned file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.build.selfcheck import check_orphans, check_structure
from grader.model import exercise_map
from grader.model.course import CourseError, load_course

KIT = Path(__file__).resolve().parents[2]


@pytest.fixture
def kit_copy(tmp_path, monkeypatch):
    """A copy of the kit's course files, with the grader's per-exercise folders copied too."""
    for name in ("course.toml", "exercises", "solutions"):
        src = KIT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / name)
    package = tmp_path / "grader"
    for name in ("checks", "probes", "mistakes"):
        shutil.copytree(KIT / "grader" / name, package / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(exercise_map, "PACKAGE_DIR", package)
    return tmp_path


def test_every_exercise_has_all_its_files():
    course = load_course(None)
    for ex in course.exercises:
        files = exercise_map.files_of(course, ex)
        assert files.stub.name == files.solution.name == ex.file
        assert files.checks.name == f"test_{ex.module}.py"
        assert files.mistakes.name == f"{ex.id}.py"
        assert exercise_map.missing_files(course, ex) == []
    assert exercise_map.files_of(course, course.exercise("ex01")).probes is None  # probes/common.py only
    assert exercise_map.files_of(course, course.exercise("ex05")).probes.name == "ex05.py"
    assert exercise_map.files_of(course, course.exercise("ex12")).pieces == ("get_batch", "bigram", "estimate_loss")
    assert exercise_map.orphan_files(course) == []


@pytest.mark.parametrize("gone", ["exercises/ex03_param_budget.py", "solutions/ex03_param_budget.py",
                                  "grader/checks/test_ex03_param_budget.py", "grader/probes/ex03.py",
                                  "grader/mistakes/ex03.py"])
def test_a_missing_file_fails_the_check(kit_copy, gone):
    (kit_copy / gone).unlink()
    if gone.startswith(("exercises/", "grader/checks/")):  # course.toml itself names these: refused on load
        with pytest.raises(CourseError, match="ex03"):
            load_course(kit_copy / "course.toml")
        return
    course = load_course(kit_copy / "course.toml")
    verdicts = check_structure(course, course.exercise("ex03"))
    failed = [v.what for v in verdicts if not v.ok]
    assert failed == [f"ex03: {gone} exists"]


@pytest.mark.parametrize("extra", ["exercises/ex99_extra.py", "solutions/notes.py",
                                   "grader/checks/test_ex99_extra.py", "grader/probes/ex99.py",
                                   "grader/mistakes/ex99.py"])
def test_an_orphaned_file_fails_the_check(kit_copy, extra):
    course = load_course(kit_copy / "course.toml")
    assert check_orphans(course).ok
    (kit_copy / extra).write_text("x = 1\n", encoding="utf-8")
    verdict = check_orphans(course)
    assert not verdict.ok and extra in verdict.detail
