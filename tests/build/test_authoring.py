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



# ------------------------------------------------------------------ the authoring faults
# Each planted in an exercise of its own, scaffolded by `grade new`'s library (the same files):
# (what the author wrote, the edit, the line `grade check --only` says, with its file).

_SCAFFOLD_MISTAKE = "added_not_multiplied"  # the scaffold's known mistake (grader.build.scaffold)
_SCAFFOLD_FIX = 'fix={"zh": "返回 x * factor", "en": "return x * factor"},'
_PROBED = '''

@pytest.mark.points(1)
def test_typo_in_a_probe(student, reference):
    """scale：probe 名写错 | scale: a probe's name mistyped"""
    same(student, reference, probe("{id}.attn", torch.ones(2, 3), 2.0))


@pytest.mark.points(1)
def test_typo_in_a_call(student, reference):
    """scale：函数名写错 | scale: a function's name mistyped"""
    same(student, reference, call("scal", torch.ones(2, 3), 2.0))


@pytest.mark.points(1)
def test_probe_raises_first(student, reference):
    """scale：probe 先出错 | scale: the probe fails before it calls the submission"""
    same(student, reference, probe("{id}.scaled", torch.ones(2, 3)))


@pytest.mark.points(1)
def test_check_errors(student, reference):
    """scale：检查本身出错 | scale: the check itself errors"""
    x = torch.ones(2, 3) @ torch.ones(2, 3)  # (2, 3) @ (2, 3): the author's shape error
    same(student, reference, call("scale", x, 2.0))
'''
_PROBES = '''"""{id}'s probes: one that fails before it calls the submission."""

SETTINGS = {{}}


def scaled(mod, x):
    return mod.scale(x, SETTINGS["factor"])  # KeyError: the setting was never written
'''


def _checks(kit: Path, ex: str) -> Path:
    return kit / "grader" / "per_exercise" / ex / "checks.py"


def _set_in_course(kit: Path, ex: str, **values) -> None:
    import tomlkit

    doc = tomlkit.parse((kit / "course.toml").read_text(encoding="utf-8"))
    next(t for t in doc["exercises"] if t["id"] == ex).update(values)
    (kit / "course.toml").write_text(tomlkit.dumps(doc), encoding="utf-8")


def _no_fix(kit, ex):
    edit(_checks(kit, ex), _SCAFFOLD_FIX, "")


def _hint_out_of_range(kit, ex):
    edit(_checks(kit, ex), "hint=1)", "hint=7)")


def _stub_by_hand(kit, ex):
    stub = next((kit / "exercises").glob(f"{ex}_*.py"))
    edit(stub, "import torch\n", "import torch\nimport math\n")


def _points_in_course(kit, ex):
    _set_in_course(kit, ex, points=5)


def _section_in_chinese_only(kit, ex):
    _set_in_course(kit, ex, section="自注意力")


def _check_without_points_or_english(kit, ex):
    edit(_checks(kit, ex), '@pytest.mark.points(2)\ndef test_random_shapes(student, reference):\n'
                           '    """scale：随机形状与因子 | scale: random shapes and factors"""',
         'def test_random_shapes(student, reference):\n    """scale：随机形状与因子"""')


def _fixes_as_a_hint_level(kit, ex):
    hints = kit / "grader" / "per_exercise" / ex / "hints.toml"
    hints.write_text(hints.read_text(encoding="utf-8") + '\n[[level]]\nzh = "改法：返回 x * factor"\n'
                                                         'en = "The fixes: return x * factor"\n', encoding="utf-8")


def _grader_side(kit, ex):
    edit(_checks(kit, ex), "from grader.judge import call, same", "from grader.judge import call, probe, same")
    edit(_checks(kit, ex), "\n\n# ----", _PROBED.replace("{id}", ex) + "\n\n# ----")
    (kit / "grader" / "per_exercise" / ex / "probes.py").write_text(_PROBES.format(id=ex), encoding="utf-8")


def _clean(kit, ex):
    """The scaffold as `grade new` writes it: no fault."""


CHECKS_PY = "grader/per_exercise/{ex}/checks.py"
FAULTS = {  # the edit, and the lines `grade check --only` prints for it ({ex}, {stub} filled in)
    "no_fix": (_no_fix, [CHECKS_PY + f": mistake '{_SCAFFOLD_MISTAKE}' has no fix in both languages: add fix="]),
    "hint_out_of_range": (_hint_out_of_range, [
        CHECKS_PY + f": mistake '{_SCAFFOLD_MISTAKE}' points to hint level 7, but hints.toml writes levels 1–2: "]),
    "stub_by_hand": (_stub_by_hand, ["{stub}: differs from what the reference gives (+import math): "
                                     "grade check --only {ex} --write-stubs rewrites it"]),
    "points_in_course": (_points_in_course, ["course.toml: {ex}: points = 5, its checks' points add up to 3: "
                                             "remove points from course.toml"]),
    "section_in_chinese_only": (_section_in_chinese_only, [
        "course.toml: {ex}: its section does not read in English ('自注意力'): write it in both languages"]),
    "check_without_points_or_english": (_check_without_points_or_english, [
        CHECKS_PY + ": test_random_shapes has no points: add @pytest.mark.points(n)",
        CHECKS_PY + ": test_random_shapes's title is not in both languages: "]),
    "fixes_as_a_hint_level": (_fixes_as_a_hint_level, [
        "grader/per_exercise/{ex}/hints.toml: level 3 writes the fixes: remove it: the last level is built"]),
    "grader_side": (_grader_side, [
        CHECKS_PY + ': probe("{ex}.attn") names no probe: define attn(mod, …) in grader/per_exercise/{ex}/probes.py',
        "{ex}: the reference passes every check (6)",
        "test_typo_in_a_probe: the check itself errors (the author's error, in per_exercise/{ex}/checks.py): "
        "grader error (check): AuthorsError: {ex}.attn: ",
        "test_typo_in_a_call: the check itself errors (the author's error, in per_exercise/{ex}/checks.py): "
        "grader error (check): AuthorsError: ",
        "test_probe_raises_first: the check itself errors (the author's error, in per_exercise/{ex}/checks.py): "
        "grader error (check): AuthorsError: {ex}.scaled raised KeyError before the reference ran",
        "test_check_errors: the check itself errors (the author's error, in per_exercise/{ex}/checks.py): "
        "grader error (check): grader/per_exercise/{ex}/checks.py:"]),
    "clean": (_clean, []),
}
GRADER_SIDE = ("test_typo_in_a_probe", "test_typo_in_a_call", "test_probe_raises_first", "test_check_errors")


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    """One exercise per fault in one copy of the kit; one `grade check --only` over all of them,
    the grader-side exercise's untouched stub graded as a student's, and, last, `grade check`
    once more when course.toml names an assignment that is not there."""
    from grader.build.scaffold import new_exercise
    from grader.model.course import load_course

    kit = copy_kit(ROOT, tmp_path_factory.mktemp("faulty") / "kit")
    ids = {}
    for fault, (plant, _) in FAULTS.items():
        ids[fault] = next_exercise_id(kit)
        new_exercise(load_course(kit / "course.toml"), ids[fault], assignment="scratch", name=fault)
        plant(kit, ids[fault])
    checked = grade(kit, "check", "--only", *ids.values())
    stub = grade(kit, ids["grader_side"], "--format", "json")
    _set_in_course(kit, ids["clean"], assignment="atention")
    misnamed_check = grade(kit, "check", "--only", ids["clean"])
    return {"kit": kit, "ids": ids, "checked": checked, "misnamed": misnamed_check, "stub": stub}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_grade_check_names_each_authoring_fault_with_its_file(faulty, fault):
    ex = faulty["ids"][fault]
    stub = f"exercises/{ex}_{fault}.py"
    lines = [line.strip() for line in faulty["checked"].stdout.splitlines()]
    for said in FAULTS[fault][1]:
        said = said.format(ex=ex, stub=stub)
        assert any(line.startswith(said) for line in lines) or any(said in line for line in lines), \
            f"{said!r} not in\n" + faulty["checked"].stdout
    rules_kept = f"✓ {ex}: written by the authoring rules"
    static = [s for s in FAULTS[fault][1] if s.startswith(("course.toml", "grader/", "{stub}"))]
    assert (rules_kept in lines) == (not static), faulty["checked"].stdout
    if fault == "clean":
        assert not [line for line in lines if line.startswith(f"✗ {ex}:")], faulty["checked"].stdout


def test_grade_check_fails_when_any_exercise_has_a_fault(faulty):
    assert faulty["checked"].returncode == 1, _said(faulty["checked"])


def test_an_undefined_assignment_is_named_in_course_toml(faulty):
    """An authoring fault like the others (✗, exit 1), not a misuse of the command."""
    proc = faulty["misnamed"]
    assert proc.returncode == 1, _said(proc)
    assert re.search(rf"^  ✗ course\.toml: \[\[exercises\]\] #\d+ \({faulty['ids']['clean']}\): .*unknown assignment "
                     r"'atention'$", proc.stderr, re.M), _said(proc)
    assert "Usage:" not in proc.stderr


def test_a_grader_side_failure_never_gives_the_untouched_stub_points(faulty):
    """A mistyped probe or function, a probe that raises before it calls the submission, a check
    that errors: the stub raises NotImplementedError and the reference would fail the same way,
    but neither is a match: each check errors as the grader's (the author's), 0 points."""
    report = json.loads(faulty["stub"].stdout)
    (exercise,) = report["exercises"]
    checks = {c["name"]: c for c in exercise["checks"]}
    for name in GRADER_SIDE:
        assert (checks[name]["score"], checks[name]["passed"]) == (0, False), checks[name]
        assert checks[name]["kind"] == "grader_error", checks[name]
    assert exercise["score"] == 0
