"""`grade check --mutants`: how strong an exercise's checks are.

Every mutant of the reference (`grader.build.mutants`) is graded by the exercise's checks
in the judge, as a trusted subject (the mistakes' variants are graded the same way, see
`grader.build.selfcheck.grade_variant`), under the grader's limits and in a fork of its own
(`grader.build.mutant_limits`). A mutant that fails a check is killed; one that
passes every check survives: a student who wrote that bug would get full marks. Some
survivors are equivalent mutants, the same program in other words (`torch.cat(…, dim=1)` and
`dim=-1` on a 2-D tensor): the survivor list shows the line before and after so that they are
easy to tell from the real gaps.

The reference's answers are computed once for all the mutants (and kept on disk when slow,
`grader.judge.references`): only the mutant's side is computed for each.

    ex01  solutions/ex01_windows.py: 162 mutants, 150 of 162 killed (93%)
      ex01 solutions/ex01_windows.py:12  head = seq[:-1] -> head = seq[:len(seq) - 1]  (…)
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import click

from grader.build.mutant_limits import LimitedSubject, graded_apart
from grader.build.mutants import Mutant, mutant_module, mutants_of
from grader.build.selfcheck import grade_variant
from grader.model.course import Course


@dataclass
class Outcome:
    """One mutant graded: the checks it failed (none: it survived)."""

    mutant: Mutant
    failed: tuple[str, ...]

    @property
    def killed(self) -> bool:
        return bool(self.failed)


@dataclass
class ExerciseMutants:
    """An exercise's mutants graded (`outcomes`), of `made` mutants; `left_out` says why none or
    only some were graded."""

    exercise_id: str
    where: str  # the reference's file, as shown: solutions/ex01_windows.py
    made: int
    outcomes: list[Outcome] = field(default_factory=list)
    left_out: str = ""

    @property
    def killed(self) -> int:
        return sum(o.killed for o in self.outcomes)

    @property
    def survivors(self) -> list[Mutant]:
        return [o.mutant for o in self.outcomes if not o.killed]

    def ratio(self) -> str:
        return f"{self.killed / len(self.outcomes):.0%}" if self.outcomes else "-"


def failed_checks(result) -> tuple[str, ...]:
    return tuple(c.name for c in result.checks if not c.passed and not c.manual)


def spread(mutants: list[Mutant], most: int | None) -> list[Mutant]:
    """At most `most` of the mutants, spread evenly over the file (all when `most` is None).

        spread([m0, m1, m2, m3, m4, m5], 3) -> [m0, m2, m4]
    """
    if most is None or len(mutants) <= most:
        return list(mutants)
    return [mutants[i * len(mutants) // most] for i in range(most)]


def grade_mutants(course: Course, ex_id: str, references, *, mutants: list[Mutant] | None = None,
                  most: int | None = None, budget: float | None = None) -> ExerciseMutants:
    """Grade the exercise's mutants (all of the reference's, or `mutants`).

    The reference itself is graded first, the same way: it must pass every check, and the time
    it takes estimates the mutants' (over `budget` seconds: none is graded, `left_out` says so).
    """
    ex = course.exercise(ex_id)
    reference = references(ex_id)
    path = course.solutions_dir / ex.file
    made = mutants if mutants is not None else mutants_of(path.read_text(encoding="utf-8"))
    report = ExerciseMutants(ex_id, str(path.relative_to(course.root)), len(made))
    chosen = spread(made, most)
    start = time.monotonic()
    itself = grade_variant(course, ex_id, LimitedSubject(reference.module, ex.timeout), references)
    seconds = time.monotonic() - start
    if failed_checks(itself) or not itself.checks:
        report.left_out = "the reference does not pass its own checks: " + (", ".join(failed_checks(itself))
                                                                            or "it has none")
        return report
    if budget and seconds * len(chosen) > budget:
        report.left_out = (f"{len(chosen)} mutants × {seconds:.0f} s would take over the budget of {budget:g} s "
                           f"(--budget 0 grades them all, --max-mutants N some)")
        return report
    for mutant in chosen:
        def grade(mutant=mutant):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a mutant's (softmax without dim=): not the report's
                subject = LimitedSubject(mutant_module(mutant, reference.module), ex.timeout)
                return failed_checks(grade_variant(course, ex_id, subject, references))

        report.outcomes.append(Outcome(mutant, graded_apart(grade, ex.budget)))
    if len(chosen) < len(made):
        report.left_out = f"{len(chosen)} of {len(made)} graded (--max-mutants {most})"
    return report


def summary(report: ExerciseMutants) -> str:
    """`ex01  solutions/ex01_windows.py: 162 mutants, 150 of 162 killed (93%)`"""
    head = f"{report.exercise_id}  {report.where}: {report.made} mutants"
    if report.outcomes:
        head += f", {report.killed} of {len(report.outcomes)} killed ({report.ratio()})"
    return head + (f"; {report.left_out}" if report.left_out else "")


def table(reports: list[ExerciseMutants]) -> list[str]:
    """The kill ratio per exercise, as a Markdown table (what the README shows)."""
    lines = ["| exercise | mutants | killed | ratio |", "| --- | ---: | ---: | ---: |"]
    for r in reports:
        lines.append(f"| {r.exercise_id} | {len(r.outcomes) or r.made} | {r.killed if r.outcomes else '-'} "
                     f"| {r.ratio()} |")
    return lines


def run_mutants(course: Course, ids: list[str], *, most: int | None = None, budget: float | None = None,
                echo=click.echo) -> list[ExerciseMutants]:
    """`grade check --mutants`: each exercise's summary and survivors, then the table."""
    from grader.judge.references import LiveReferences
    from grader.run.startup import freeze_loaded, load_judge

    load_judge()
    freeze_loaded()
    references = LiveReferences(course)
    reports = []
    for ex_id in ids:
        report = grade_mutants(course, ex_id, references, most=most, budget=budget)
        reports.append(report)
        echo(summary(report))
        for mutant in report.survivors:
            echo("  " + mutant.shown(f"{ex_id} {report.where}"))
    echo("")
    for line in table(reports):
        echo(line)
    return reports
