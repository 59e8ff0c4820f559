"""The authoring rules of an exercise, read from its files: what `grade check` says before it grades.

Each rule looks at the files alone (course.toml, the reference, the stub, the exercise's folder),
with `ast` and `tomllib`: nothing is run. A fault names its file and says how to fix it:

    ex14/checks.py: mistake 'no_mask' has no fix: add fix={"zh": ..., "en": ...} to its Mistake(...)

The rules, in the order an author meets them (docs/instructors/authoring.md walks through them):

1. the exercise's files exist (the stub, the reference, its folder's checks.py and hints.toml);
2. its section renders in both languages;
3. the stub is what the reference's solution markers give (`grader.build.stubs`);
4. every check has points and a title in both languages (`中文 | English`), and course.toml's
   `points`, where written, is their sum;
5. every probe a check names exists;
6. every known mistake has a fix in both languages and a hint level below the last (the fixes);
7. the hints are written levels only: the last level, the fixes, is built, never written.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from grader.model.course import Course, Exercise, check_points
from grader.model.exercise_map import files_of, probes_named

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


@dataclass(frozen=True)
class Fault:
    """One authoring mistake: where, what, and how to fix it."""

    file: str
    what: str
    fix: str

    def line(self) -> str:
        return f"{self.file}: {self.what}: {self.fix}"


def _shown(course: Course, path: Path) -> str:
    try:
        return str(path.relative_to(course.root))
    except ValueError:
        return str(path)


def _checks_tree(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None


def _check_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def _marks(func: ast.FunctionDef) -> set[str]:
    names = set()
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def section_faults(course: Course, ex: Exercise) -> list[Fault]:
    if _CJK.search(ex.section.en) or not ex.section.en.strip():
        return [Fault("course.toml", f"{ex.id}: its section does not read in English ({ex.section.en!r})",
                      'write it in both languages: section = { zh = "5.2、5.7 练习 1", en = "section 5.2, 5.7 exercise 1" }')]
    return []


def stub_faults(course: Course, ex: Exercise) -> list[Fault]:
    from grader.build.stubs import MarkerError, stub_differences

    files = files_of(course, ex)
    if not (files.stub.is_file() and files.solution.is_file()):
        return []
    try:
        diff = stub_differences(files.stub.read_text(encoding="utf-8"), files.solution.read_text(encoding="utf-8"),
                                ex.id, _shown(course, files.stub))
    except (MarkerError, SyntaxError) as err:
        return [Fault(_shown(course, files.solution), f"its solution markers do not stand: {err}",
                      "pair every ### BEGIN SOLUTION with an ### END SOLUTION, inside a function or around constants")]
    if diff:
        first = next((line for line in diff if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))), "")
        return [Fault(_shown(course, files.stub), f"differs from what the reference gives ({first.strip()[:80]})",
                      f"grade check --only {ex.id} --write-stubs rewrites it from the reference")]
    return []


def check_faults(course: Course, ex: Exercise) -> list[Fault]:
    files = files_of(course, ex)
    shown = _shown(course, files.checks)
    tree = _checks_tree(files.checks)
    if tree is None:
        return [Fault(shown, "cannot be read as Python", "fix its syntax (python -m py_compile)")]
    faults = []
    checks = _check_functions(tree)
    if not checks:
        faults.append(Fault(shown, "holds no check", "write a function test_… with @pytest.mark.points(n)"))
    for func in checks:
        marks = _marks(func)
        if "points" not in marks and "manual" not in marks:
            faults.append(Fault(shown, f"{func.name} has no points", "add @pytest.mark.points(n) above it"))
        doc = ast.get_docstring(func) or ""
        title = doc.strip().splitlines()[0] if doc.strip() else ""
        zh, sep, en = title.partition("|")
        if not (sep and zh.strip() and en.strip()):
            faults.append(Fault(shown, f"{func.name}'s title is not in both languages",
                                'begin its docstring with "中文标题 | English title"'))
    written = _written_points(course, ex)
    total = sum(check_points(files.checks).values())
    if written is not None and written != total:
        faults.append(Fault("course.toml", f"{ex.id}: points = {written}, its checks' points add up to {total}",
                            "remove points from course.toml (an exercise's points are its checks')"))
    return faults


def _written_points(course: Course, ex: Exercise) -> int | None:
    import tomllib

    try:
        data = tomllib.loads((course.root / "course.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    table = next((t for t in data.get("exercises", []) if t.get("id") == ex.id), {})
    return table.get("points")


def probe_faults(course: Course, ex: Exercise) -> list[Fault]:
    """Every probe("exNN.name") a check names is a function of that exercise's probes.py (or of
    the shared grader/probes/ modules)."""
    files = files_of(course, ex)
    faults = []
    for spec in sorted(probes_named(files.checks)):
        module, _, name = spec.rpartition(".")
        path = (course.unit(module) / "probes.py") if re.fullmatch(r"ex\d+", module) \
            else course.grader_dir / "probes" / f"{module}.py"
        tree = _checks_tree(path)
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} if tree else set()
        if name not in defined:
            where = _shown(course, path) if tree is not None else f"{_shown(course, path)} (missing)"
            faults.append(Fault(_shown(course, files.checks), f'probe("{spec}") names no probe',
                                f"define {name}(mod, …) in {where}, or fix the name"))
    return faults


def mistake_faults(course: Course, ex: Exercise) -> list[Fault]:
    """Every known mistake has a fix in both languages and a hint level in the written ladder."""
    from grader.judge.mistakes import mistakes_for

    shown = _shown(course, files_of(course, ex).checks)
    faults = []
    try:
        mistakes = mistakes_for(ex.id)
    except Exception as err:  # noqa: BLE001 - the checks module does not import: said, as the author's
        return [Fault(shown, f"does not import ({type(err).__name__}: {err})", "run python -c 'import …' to see why")]
    written = len(ex.hints)
    for mistake in mistakes:
        fix = mistake.fix or {}
        if not (isinstance(fix, dict) and str(fix.get("zh", "")).strip() and str(fix.get("en", "")).strip()):
            faults.append(Fault(shown, f"mistake {mistake.id!r} has no fix in both languages",
                                'add fix={"zh": "…", "en": "…"} to its Mistake(...): the last hint level lists it'))
        if mistake.hint is not None and not 1 <= mistake.hint <= written:
            faults.append(Fault(shown, f"mistake {mistake.id!r} points to hint level {mistake.hint}, "
                                       f"but hints.toml writes levels 1–{written}",
                                f"give it hint=1…{written} (the level to read next; the fixes come after)"))
    return faults


def hint_faults(course: Course, ex: Exercise) -> list[Fault]:
    shown = _shown(course, files_of(course, ex).hints)
    for n, level in enumerate(ex.hints, start=1):
        if level.zh.startswith("改法") or level.en.lower().startswith("the fixes"):
            return [Fault(shown, f"level {n} writes the fixes", "remove it: the last level is built from the "
                                                                  "known mistakes' fix (grade hint shows it)")]
    return []


RULES = (section_faults, stub_faults, check_faults, probe_faults, mistake_faults, hint_faults)


def faults_of(course: Course, ex: Exercise) -> list[Fault]:
    """Every authoring fault of one exercise, in the order an author meets them."""
    from grader.model.exercise_map import missing_files

    missing = missing_files(course, ex)
    if missing:
        return [Fault(_shown(course, p), "missing", f"grade new {ex.id} writes a start for it") for p in missing]
    return [fault for rule in RULES for fault in rule(course, ex)]


__all__ = ["Fault", "faults_of", "RULES"]
