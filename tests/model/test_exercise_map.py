"""From an exercise id, every file of it; `grade check` fails on a missing or orphaned file."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from grader.build.selfcheck import check_orphans, check_structure
from grader.model import exercise_map
from grader.model.course import CourseError, load_course

KIT = Path(__file__).resolve().parents[2]
COURSE = load_course(KIT / "course.toml")
UNITS = COURSE.units_dir.relative_to(KIT).as_posix()  # grader/per_exercise


def _first_with(name: str, present: bool):
    """The first exercise whose folder holds `name` (present) or does not (not present)."""
    return next(ex for ex in COURSE.exercises if (COURSE.unit(ex.id) / name).is_file() == present)


FULL = _first_with("fixtures.py", True)  # every kind of file an exercise can have
BARE = _first_with("probes.py", False)  # the checks call only grader/probes/common.py's probes
UNKNOWN = f"ex{max(int(ex.id.removeprefix('ex')) for ex in COURSE.exercises) + 1:02d}"  # in no course.toml


@pytest.fixture
def kit_copy(tmp_path):
    """A copy of the kit's course files, with the grader's per-exercise folders copied too."""
    for name in ("course.toml", "exercises", "solutions"):
        src = KIT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / name)
    shutil.copytree(COURSE.units_dir, tmp_path / UNITS, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_every_exercise_has_all_its_files():
    tables = {t["id"]: t for t in tomllib.loads((KIT / "course.toml").read_text(encoding="utf-8"))["exercises"]}
    for ex in COURSE.exercises:
        files = exercise_map.files_of(COURSE, ex)
        unit = COURSE.unit(ex.id)
        assert (files.stub, files.solution) == (COURSE.exercises_dir / ex.file, COURSE.solutions_dir / ex.file)
        assert (files.checks, files.hints) == (unit / "checks.py", unit / "hints.toml")
        assert files.probes in (None, unit / "probes.py") and files.fixtures in (None, unit / "fixtures.py")
        assert files.pieces == tuple(tables[ex.id].get("pieces", ()))
        assert exercise_map.missing_files(COURSE, ex) == []
    assert exercise_map.files_of(COURSE, BARE).probes is None and exercise_map.files_of(COURSE, BARE).fixtures is None
    assert exercise_map.files_of(COURSE, FULL).fixtures == COURSE.unit(FULL.id) / "fixtures.py"
    assert exercise_map.orphan_files(COURSE) == []


# course.toml names these (the stub, and the folder's checks and hints): a course without one is refused on load
REFUSED_ON_LOAD = {f"exercises/{FULL.file}", f"{UNITS}/{FULL.id}/checks.py", f"{UNITS}/{FULL.id}/hints.toml"}


@pytest.mark.parametrize("gone", [f"exercises/{FULL.file}", f"solutions/{FULL.file}",
                                  *(f"{UNITS}/{FULL.id}/{name}" for name in
                                    ("checks.py", "probes.py", "fixtures.py", "hints.toml"))])
def test_a_missing_file_fails_the_check(kit_copy, gone):
    (kit_copy / gone).unlink()
    if gone in REFUSED_ON_LOAD:
        with pytest.raises(CourseError, match=FULL.id):
            load_course(kit_copy / "course.toml")
        return
    course = load_course(kit_copy / "course.toml")
    verdicts = check_structure(course, course.exercise(FULL.id))
    failed = [(v.what, v.detail) for v in verdicts if not v.ok]
    assert len(failed) == 1 and failed[0][1].startswith(f"{gone}: missing"), failed


@pytest.mark.parametrize("extra", [f"exercises/{UNKNOWN}_extra.py", "solutions/notes.py",
                                   f"{UNITS}/{UNKNOWN}/checks.py", f"{UNITS}/{UNKNOWN}/hints.toml",
                                   f"{UNITS}/{BARE.id}/probes.py",  # no check of it names a probe of its own
                                   f"{UNITS}/{BARE.id}/fixtures.py"])  # nothing of it imports one
def test_an_orphaned_file_fails_the_check(kit_copy, extra):
    course = load_course(kit_copy / "course.toml")
    assert check_orphans(course).ok
    (kit_copy / extra).parent.mkdir(exist_ok=True)
    (kit_copy / extra).write_text("x = 1\n", encoding="utf-8")
    verdict = check_orphans(course)
    assert not verdict.ok and extra in verdict.detail.split(", "), verdict.detail
