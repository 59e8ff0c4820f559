"""course.toml is validated on load: unknown keys, missing keys and missing files are errors."""

from __future__ import annotations

import subprocess
import tomllib

import pytest

from grader.model.course import CourseError, load_course, parse_course


def test_the_kits_course_loads(root):
    course = load_course(root / "course.toml")
    ids = [e.id for e in course.exercises]
    assert ids == sorted(ids)
    assert {a.id for a in course.assignments} == {"ch05", "bigram"}
    for ex in course.exercises:
        assert (course.exercises_dir / ex.file).is_file()
        assert (course.solutions_dir / ex.file).is_file()
        assert ex.hints and all(h.zh and h.en for h in ex.hints)


def _data(root):
    return tomllib.loads((root / "course.toml").read_text(encoding="utf-8"))


def test_unknown_key_is_an_error(root):
    data = _data(root)
    data["exercises"][0]["colour"] = "red"
    with pytest.raises(CourseError, match="unknown key.*colour"):
        parse_course(data, root)


@pytest.mark.parametrize("key", ["id", "assignment", "file", "title", "section", "timeout"])
def test_missing_key_is_an_error(root, key):
    data = _data(root)
    del data["exercises"][0][key]
    with pytest.raises(CourseError, match=f"missing key.*{key}"):
        parse_course(data, root)


def test_points_are_the_checks_unless_written(root):
    """An exercise's points are the sum of its checks' `@pytest.mark.points`; a student release,
    whose checks are trimmed, writes them into course.toml, and those are taken."""
    import importlib

    data = _data(root)
    first = parse_course(data, root).exercises[0]
    checks = importlib.import_module(first.checks_module)
    marked = [mark.args[0] for name, fn in vars(checks).items() if name.startswith("test_")
              for mark in getattr(fn, "pytestmark", []) if mark.name == "points"]
    assert marked and first.points == sum(marked)
    data["exercises"][0]["points"] = first.points + 1
    assert parse_course(data, root).exercises[0].points == first.points + 1
    for bad in (0, True, "3"):
        data["exercises"][0]["points"] = bad
        with pytest.raises(CourseError, match="points"):
            parse_course(data, root)


def test_a_section_is_a_zh_en_table_or_a_chinese_string(root):
    data = _data(root)
    assert parse_course(data, root).exercises[0].section("en") == data["exercises"][0]["section"]["en"]
    data["exercises"][0]["section"] = "5.2、5.7 练习 1"  # the Chinese alone: its English made from it
    section = parse_course(data, root).exercises[0].section
    assert section("zh") == "5.2、5.7 练习 1" and section("en") == "section 5.2, 5.7 exercise 1"
    for bad in ({"zh": "5.2"}, "", 5):
        data["exercises"][0]["section"] = bad
        with pytest.raises(CourseError, match="section|zh/en"):
            parse_course(data, root)


def test_missing_file_is_an_error(root):
    data = _data(root)
    data["exercises"][0]["file"] = "ex01_nowhere.py"
    with pytest.raises(CourseError, match="file not found"):
        parse_course(data, root)


def test_duplicate_and_unknown_assignment(root):
    data = _data(root)
    data["exercises"][1]["id"] = data["exercises"][0]["id"]
    with pytest.raises(CourseError, match="duplicate"):
        parse_course(data, root)
    data = _data(root)
    data["exercises"][0]["assignment"] = "ch99"
    with pytest.raises(CourseError, match="unknown assignment"):
        parse_course(data, root)


def test_bad_course_file_is_a_usage_error(tmp_path, grade_exe):
    bad = tmp_path / "course.toml"
    bad.write_text("format_version = 1\n[course\n", encoding="utf-8")
    run = subprocess.run([grade_exe, "--course", str(bad), "list"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "not valid TOML" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout
