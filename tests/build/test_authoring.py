"""Writing an exercise, as an author does it, in a scratch copy of the kit.

The worked example: `grade new` scaffolds an exercise (whose reference passes at once), the
authoring guide's worked example (docs/instructors/authoring.md) is written into it, and then
`grade check --only` is green, `grade release` ships its stub, public check and hints (no
solution), `grade nbgrader` writes its assignment's notebook, and `grade batch` grades it for
a cohort of two (the reference, the stub) in grades.csv, results.json, report.html and every
`--format`. The rest of the course is left out of that copy, so that the release records two
exercises, not all (tests/build/test_release.py proves the whole course's release).

The faults: each authoring mistake of the guide's table ("What grade check --only ex14 says
about each authoring mistake") is planted in a scaffolded exercise of its own, and one
`grade check --only` run names each with its file; a grader-side failure (a probe that does
not exist, a probe that raises before it calls the submission, a check that errors) is the
author's error, reported as such, and never gives the untouched stub the check's points.

The exercise ids are the first ones past the course's last: no course fact is written here.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.cohort.judges import FORMAT_EXT
from tests.scratch_kit import copy_kit, edit, fill_from_guide, grade, next_exercise_id

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")

NAME = "tril_average"  # the guide's --name
ASSIGNMENT = "attention"  # the guide's new assignment


def _course_table(kit: Path) -> dict:
    return tomllib.loads((kit / "course.toml").read_text(encoding="utf-8"))


def _keep_only(kit: Path, keep: str) -> None:
    """Leave one exercise of the course (and its assignment) in the copy: its table, its files."""
    import tomlkit

    doc = tomlkit.parse((kit / "course.toml").read_text(encoding="utf-8"))
    gone = [t for t in doc["exercises"] if t["id"] != keep]
    kept = next(t for t in doc["exercises"] if t["id"] == keep)
    for table in gone:
        for folder in ("exercises", "solutions"):
            (kit / folder / str(table["file"])).unlink()
        shutil.rmtree(kit / "grader" / "per_exercise" / str(table["id"]))
    doc["exercises"] = tomlkit.aot()
    doc["exercises"].append(kept)
    assignments = [a for a in doc["assignments"] if a["id"] == kept["assignment"]]
    doc["assignments"] = tomlkit.aot()
    for table in assignments:
        doc["assignments"].append(table)
    (kit / "course.toml").write_text(tomlkit.dumps(doc), encoding="utf-8")


def _said(proc) -> str:
    return proc.stdout[-4000:] + proc.stderr[-4000:]


# ------------------------------------------------------------------ the worked example


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    """`grade new` in a copy of the kit holding one earlier exercise, then the scaffold graded."""
    kit = copy_kit(ROOT, tmp_path_factory.mktemp("authored") / "kit")
    first = _course_table(kit)["exercises"][0]
    new_id = next_exercise_id(kit)
    _keep_only(kit, first["id"])
    made = grade(kit, "new", new_id, "--assignment", ASSIGNMENT, "--name", NAME)
    assert made.returncode == 0, _said(made)
    graded = grade(kit, new_id, "--reference", "--format", "json")
    return {"kit": kit, "id": new_id, "file": f"{new_id}_{NAME}.py", "made": made,
            "course": _course_table(kit), "graded": graded}


@pytest.fixture(scope="module")
def authored(scaffolded):
    """The guide's worked example written into the scaffold, its stub written by `grade check`."""
    kit, new_id = scaffolded["kit"], scaffolded["id"]
    fill_from_guide(ROOT, kit, new_id)
    checked = grade(kit, "check", "--only", new_id, "--write-stubs")
    return {**scaffolded, "checked": checked}


def test_grade_new_writes_every_file_and_the_course_tables(scaffolded):
    kit, new_id, file = scaffolded["kit"], scaffolded["id"], scaffolded["file"]
    written = [line.removeprefix("wrote ") for line in scaffolded["made"].stdout.splitlines() if line.startswith("wrote ")]
    unit = kit / "grader" / "per_exercise" / new_id
    assert written == [str(p) for p in (kit / "solutions" / file, kit / "exercises" / file, unit / "__init__.py",
                                        unit / "checks.py", unit / "hints.toml", kit / "course.toml")]
    course = scaffolded["course"]
    table = course["exercises"][-1]
    assert (table["id"], table["assignment"], table["file"]) == (new_id, ASSIGNMENT, file)
    assert set(table["title"]) == set(table["section"]) == {"zh", "en"}
    assert [a["id"] for a in course["assignments"]][-1] == ASSIGNMENT  # a new assignment gets its table


def test_the_scaffold_runs_at_once_with_full_marks(scaffolded):
    """`grade exNN --reference` right after `grade new`: every check passes."""
    proc = scaffolded["graded"]
    assert proc.returncode == 0, _said(proc)
    report = json.loads(proc.stdout)
    (exercise,) = report["exercises"]
    assert exercise["id"] == scaffolded["id"] and exercise["score"] == exercise["max_score"] > 0, exercise


def test_grade_check_proves_the_guides_example(authored):
    """Green: the rules, the stub (written by --write-stubs) failing every check, the reference
    passing every check, the known mistake caught and named."""
    proc, new_id, file = authored["checked"], authored["id"], authored["file"]
    assert proc.returncode == 0, _said(proc)
    assert f"wrote {authored['kit'] / 'exercises' / file}" in proc.stdout
    for verdict in (f"✓ {new_id}: written by the authoring rules", f"✓ {new_id}: the reference passes every check (3)",
                    f"✓ {new_id}: the stub fails every check as not implemented",
                    f"✓ {new_id}: mistake 'no_mask' fails and is named"):
        assert verdict in proc.stdout, proc.stdout
    stub = (authored["kit"] / "exercises" / file).read_text(encoding="utf-8")
    assert f'raise NotImplementedError("{new_id}: 在这里实现 prefix_average' in stub
    assert "MASK_ONES_T8 = NotImplemented" in stub and "torch.tril" not in stub


@pytest.fixture(scope="module")
def released(authored, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "gpt-course"
    proc = grade(authored["kit"], "release", str(out))
    assert proc.returncode == 0, _said(proc)
    return out


def test_the_release_ships_the_stub_its_public_check_and_hints_not_the_solution(authored, released):
    new_id, file = authored["id"], authored["file"]
    kit = authored["kit"]
    assert not (released / "solutions").exists()
    assert (released / "exercises" / file).read_text(encoding="utf-8") == \
        (kit / "exercises" / file).read_text(encoding="utf-8")
    unit = released / "grader" / "per_exercise" / new_id
    checks = unit / "checks.py"
    from grader.build.release import visible_checks

    names = re.findall(r"^def (test_\w+)", checks.read_text(encoding="utf-8"), re.M)
    assert names == ["test_example"] == visible_checks((kit / "grader" / "per_exercise" / new_id / "checks.py")
                                                        .read_text(encoding="utf-8"))[0]
    hints = tomllib.loads((unit / "hints.toml").read_text(encoding="utf-8"))
    assert len(hints["level"]) == 2
    assert "torch.tril(torch.ones(T, T))" in hints["fixes"]["en"]  # the known mistake's fix, built
    table = next(t for t in _course_table(released)["exercises"] if t["id"] == new_id)
    assert table["points"] == 5 and table["assignment"] == ASSIGNMENT
    reference_lines = ("weights = torch.tril(torch.ones(T, T))", "MASK_ONES_T8 = 36")
    for path in released.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".toml", ".md", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(line in text for line in reference_lines), path


def test_grade_nbgrader_writes_the_new_assignments_notebook(authored, tmp_path):
    new_id = authored["id"]
    out = tmp_path / "nbgrader"
    proc = grade(authored["kit"], "nbgrader", str(out))
    assert proc.returncode == 0, _said(proc)
    notebook = json.loads((out / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    assert any("def prefix_average" in s and "### BEGIN SOLUTION" in s for s in sources)
    graded = [cell["metadata"]["nbgrader"] for cell in notebook["cells"]
              if cell["metadata"].get("nbgrader", {}).get("grade")]
    assert sum(cell["points"] for cell in graded) == 5, graded
    assert any(new_id in cell["grade_id"] for cell in graded), graded


def _points_in(fmt: str, text: str, new_id: str) -> tuple[float, float]:
    """The exercise's (score, max) as one report format writes them."""
    if fmt == "json":
        exercise = next(e for e in json.loads(text)["exercises"] if e["id"] == new_id)
        return exercise["score"], exercise["max_score"]
    if fmt in ("gradescope", "classroom"):
        tests = [t for t in json.loads(text)["tests"] if t["name"].startswith(f"{new_id} ")]
        return sum(t["score"] for t in tests), sum(t["max_score"] for t in tests)
    if fmt == "junit":
        suite = next(s for s in ET.fromstring(text).iter("testsuite")
                     if s.find("properties/property[@name='exercise']").get("value") == new_id)
        values = {p.get("name"): p.get("value") for p in suite.iter("property")}
        return float(values["score"]), float(values["max_score"])
    pattern = {"github": rf"^\|[^|\n]*\| {new_id} \|[^\n]*\| (\d+)/(\d+) \|$", "text": rf"^{new_id} [^\n]* (\d+)/(\d+)$"}[fmt]
    score, most = re.search(pattern, text, re.M).groups()
    return float(score), float(most)


@pytest.fixture(scope="module")
def cohort(authored, tmp_path_factory):
    """Two students: one hands in the references, one the untouched stubs; graded in every format."""
    kit, file = authored["kit"], authored["file"]
    folder = tmp_path_factory.mktemp("cohort")
    for student, source in (("ref", "solutions"), ("stub", "exercises")):
        (folder / "students" / student).mkdir(parents=True)
        for path in (kit / source).glob("*.py"):
            shutil.copy2(path, folder / "students" / student / path.name)
    assert (folder / "students" / "ref" / file).is_file()
    out = folder / "out"
    formats = [arg for fmt in sorted(FORMAT_EXT) for arg in ("--format", fmt)]
    proc = grade(kit, "batch", str(folder / "students"), "--out", str(out), "--only", ASSIGNMENT, "-j", "1", *formats)
    assert proc.returncode == 0, _said(proc)
    return {"out": out, "formats": FORMAT_EXT}


def test_grade_batch_grades_it_in_the_gradebook(authored, cohort):
    import csv

    new_id, out = authored["id"], cohort["out"]
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert (rows["(max)"][new_id], rows["ref"][new_id], rows["stub"][new_id]) == ("5", "5", "0"), rows
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in results["exercises"]] == [new_id]
    assert new_id in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", sorted(FORMAT_EXT))
def test_every_report_format_gives_it_its_points(authored, cohort, fmt):
    new_id, out = authored["id"], cohort["out"]
    reports = {path.name.partition("~")[0]: path for path in (out / "reports").glob(f"*.{cohort['formats'][fmt]}")}
    assert _points_in(fmt, reports["ref"].read_text(encoding="utf-8"), new_id) == (5, 5)
    assert _points_in(fmt, reports["stub"].read_text(encoding="utf-8"), new_id) == (0, 5)

