"""`grade check`: the kit's self-test, for instructors and CI.

It proves first that each exercise is written by the authoring rules
(`grader.build.authoring`: its files, the stub derived from the reference, points and titles,
probes that exist, fixes and hint levels, sections in both languages), each fault named with
its file and its fix; then that every stub fails every check with "not implemented", that every
reference solution passes every check (a check that errors on the reference is the author's
error, said as such), and that every known mistake fails at least one check and is named there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import click

from grader.model.course import Course, Exercise
from grader.judge.mistakes import Mistake
from grader.model.exercise_map import files_of, orphan_files
from grader.model.results import ExerciseResult


@dataclass
class Verdict:
    ok: bool
    what: str
    detail: str = ""


def public_signatures(path: Path) -> dict[str, str]:
    """Top-level names a student implements, with their signatures (from the source)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            found[node.name] = ast.unparse(node.args)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            found[node.name] = "class"
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = ast.unparse(item.args)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id.isupper():
                    found[target.id] = "constant"
    return found


def check_structure(course: Course, ex: Exercise) -> list[Verdict]:
    """The authoring rules (grader.build.authoring), then: stub and solution agree."""
    from grader.build.authoring import faults_of

    files = files_of(course, ex)
    faults = faults_of(course, ex)
    verdicts = [Verdict(not faults, f"{ex.id}: written by the authoring rules", "\n      ".join(f.line() for f in faults))]
    if files.stub.is_file() and files.solution.is_file():
        a, b = public_signatures(files.stub), public_signatures(files.solution)
        differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        verdicts.append(Verdict(not differ, f"{ex.id}: stub and solution have the same names and signatures",
                                ", ".join(differ)))
    return verdicts


def check_orphans(course: Course) -> Verdict:
    """No file in exercises/, solutions/ or grader/per_exercise/ that no exercise claims."""
    orphans = orphan_files(course)
    return Verdict(not orphans, "every file belongs to an exercise in course.toml",
                   ", ".join(_shown(course, p) for p in orphans))


def _shown(course: Course, path: Path) -> str:
    try:
        return str(path.relative_to(course.root))
    except ValueError:
        return str(path)


def grade_folder(course: Course, ids: list[str], folder: Path, references, zygote) -> list[ExerciseResult]:
    from grader.run.startup import corpus_provider
    from grader.run.session import GradingSession, run_checks

    return run_checks(GradingSession(course, ids, submission=folder, zygote=zygote, references=references,
                                     corpus=corpus_provider(course)))


def grade_variant(course: Course, ex_id: str, module, references) -> ExerciseResult:
    from grader.run.startup import corpus_provider
    from grader.run.session import GradingSession, run_checks

    return run_checks(GradingSession(course, [ex_id], references=references, in_process={ex_id: module},
                                     corpus=corpus_provider(course)))[0]


def check_reference(result: ExerciseResult) -> Verdict:
    bad = [(f"{c.name}: the check itself errors (the author's error, in per_exercise/{result.exercise.id}/checks.py): "
            if c.finding and c.finding.kind == "grader_error" else f"{c.name}: ") + (c.finding.en if c.finding else "")
           for c in result.checks if not c.passed and not c.manual]
    ok = not bad and bool(result.checks) and result.max_score == result.exercise.points
    detail = "; ".join(bad) or (f"points {result.max_score} != course.toml {result.exercise.points}"
                                if result.max_score != result.exercise.points else "")
    return Verdict(ok, f"{result.exercise.id}: the reference passes every check ({len(result.checks)})", detail)


def check_stub(result: ExerciseResult) -> Verdict:
    bad = [c.name for c in result.checks if not c.manual and (c.passed or c.finding.kind != "not_implemented")]
    return Verdict(not bad and bool(result.checks), f"{result.exercise.id}: the stub fails every check as not implemented",
                   ", ".join(bad))


def check_mistake(result: ExerciseResult, mistake: Mistake) -> Verdict:
    failed = [c for c in result.checks if not c.passed and not c.manual]
    named = [c for c in failed if c.finding and c.finding.diagnosis and c.finding.diagnosis["id"] == mistake.id]
    detail = "" if named else ("no check fails" if not failed else
                               "fails " + ", ".join(c.name for c in failed) + " but none names it")
    return Verdict(bool(named), f"{result.exercise.id}: mistake {mistake.id!r} fails and is named", detail)


@dataclass(frozen=True)
class Step:
    """Which self-check a verdict answers: `kind` is "structure", "orphans", "reference",
    "stub" or "mistake", for an exercise (and one of its known mistakes)."""

    kind: str
    exercise_id: str | None = None
    mistake_id: str | None = None


def self_checks(course: Course, ids: list[str], references, zygote, *,
                orphans: bool = True) -> Iterator[tuple[Step, Verdict]]:
    """Every self-check of `ids`, each verdict as it is reached: the authoring rules, no orphaned
    file (`orphans`), the references graded in one run, the stubs in another, then each known
    mistake's variant in this process.

        for step, verdict in self_checks(course, ["ex07"], LiveReferences(course), zygote):
            print(step.kind, verdict.ok)   # structure True, structure True, reference True, …
    """
    for ex_id in ids:
        for verdict in check_structure(course, course.exercise(ex_id)):
            yield Step("structure", ex_id), verdict
    if orphans:
        yield Step("orphans"), check_orphans(course)
    for result in grade_folder(course, ids, course.solutions_dir, references, zygote):
        yield Step("reference", result.exercise.id), check_reference(result)
    for result in grade_folder(course, ids, course.exercises_dir, references, zygote):
        yield Step("stub", result.exercise.id), check_stub(result)
    for ex_id in ids:
        reference = references(ex_id)
        for mistake in reference.mistakes:
            result = grade_variant(course, ex_id, mistake.variant(reference.module), references)
            yield Step("mistake", ex_id, mistake.id), check_mistake(result, mistake)


def run_selfcheck(course: Course, lang: str = "zh", only: list[str] | None = None, echo=click.echo) -> int:
    from grader.judge.references import LiveReferences
    from grader.run.startup import freeze_loaded, load_judge, start_zygote

    zygote = start_zygote(course, lang=lang)
    load_judge()
    freeze_loaded()

    ids = only or [e.id for e in course.exercises]
    for ex_id in ids:
        course.exercise(ex_id)  # unknown ids are a usage error
    verdicts: list[Verdict] = []
    try:
        for _, v in self_checks(course, ids, LiveReferences(course), zygote, orphans=only is None):
            verdicts.append(v)
            echo(("  ✓ " if v.ok else "  ✗ ") + v.what + (f"\n      {v.detail}" if v.detail and not v.ok else ""))
    finally:
        zygote.close()
    bad = [v for v in verdicts if not v.ok]
    echo(f"{len(verdicts) - len(bad)}/{len(verdicts)} " + ("self-checks passed" if not bad else "self-checks passed; FAILED:"))
    for v in bad:
        echo(f"  ✗ {v.what}: {v.detail}")
    return 0 if not bad else 1
