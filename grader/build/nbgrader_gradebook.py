"""The official scores of nbgrader submissions, written into nbgrader's own gradebook.

nbgrader's `autograde` runs each notebook in the student's kernel: the test cells call
`grader.notebook.run_check` in the same namespace as the student's answer cells, so an
answer cell that replaces `run_check` (or patches the grader) takes every automatic point.
`grade batch` grades the same `submitted/` notebooks the tamper-proof way (solution cells
extracted, run in fenced workers, judged outside them); `--nbgrader-db` then writes those
scores into the course's `gradebook.db` with nbgrader's Gradebook API, so formgrader,
`nbgrader generate_feedback` and `nbgrader export` show them:

- each autograded test cell's grade (grade id `exNN_<check>`, as `grade nbgrader` names
  them) gets `auto_score` = the points `grade batch` gave that check (0 when the exercise
  was graded and the check earned nothing or could not run);
- a grade an instructor set by hand (`manual_score`) is kept, and flagged for review as
  nbgrader's own autograde does (`needs_manual_grade`); cells graded by hand only (ex04's
  written answer) are left as they are;
- a student or submission nbgrader does not know yet is added (as `nbgrader autograde
  --create` would), so the route works with or without a run of nbgrader's autograde;
- an assignment the gradebook does not know refuses the whole write, before anything is
  written; a student folder whose name is not text (a byte that is not UTF-8) is skipped and
  named (its row in grades.csv stays).

    >>> write_scores(book, Path("course/submitted"), "course/gradebook.db")
    {'students': 2, 'submissions': 3, 'cells': 87, 'kept_manual': 1, 'skipped': []}
"""

from __future__ import annotations

from pathlib import Path

import click


def gradebook_url(where: str | Path) -> str:
    """`sqlite:///…/gradebook.db` for a file, a course folder (its gradebook.db) or a URL."""
    text = str(where)
    if "://" in text:
        return text
    path = Path(text).expanduser().resolve()
    if path.is_dir():
        path = path / "gradebook.db"
    if not path.is_file():
        raise click.UsageError(f"找不到 nbgrader 的 gradebook / no nbgrader gradebook at {path} "
                               "(先运行 / run first: nbgrader generate_assignment …)")
    return f"sqlite:///{path}"


def submitted_assignments(root: Path) -> dict[str, list[str]]:
    """`submitted/<student>/<assignment>/*.ipynb` -> {student: [assignment, …]}."""
    from grader.cohort.students import cohort_layout

    root, _ = cohort_layout(root)  # the folder `grade batch` read the students from
    found: dict[str, list[str]] = {}
    for student in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for assignment in sorted(p for p in student.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if any(n.suffix == ".ipynb" for n in assignment.iterdir()):
                found.setdefault(student.name, []).append(assignment.name)
    return found


def cell_scores(result: dict) -> tuple[set[str], dict[str, float]]:
    """One student's result (as in results.json) -> (exercises graded, {grade id: points})."""
    graded, scores = set(), {}
    for exercise in result.get("exercises", []):
        graded.add(exercise["id"])
        for check in exercise.get("checks", []):
            if not check.get("manual"):
                scores[f"{exercise['id']}_{check['name']}"] = float(check.get("score") or 0)
    return graded, scores


def write_scores(book: dict, submitted: Path, db: str | Path) -> dict:
    """Write every graded student's check scores into nbgrader's gradebook; a summary back."""
    from nbgrader.api import Gradebook, MissingEntry

    from grader.cohort.names import display_name

    url = gradebook_url(db)
    handed_in = submitted_assignments(submitted)
    summary = {"students": 0, "submissions": 0, "cells": 0, "kept_manual": 0, "skipped": []}
    with Gradebook(url) as gb:
        known = {a.name for a in gb.assignments}
        # checked before anything is written: a gradebook is never left with part of a class
        unknown = sorted({a for student, assignments in handed_in.items() for a in assignments
                          if a not in known and _text(student) and book.get("students", {}).get(display_name(student))})
        if unknown:
            shown = ", ".join(display_name(a) for a in unknown)
            raise click.ClickException(
                f"nbgrader 的 gradebook 里没有这些作业，什么都没有写入 / the gradebook has no assignment {shown}; "
                f"nothing was written: nbgrader generate_assignment …, or rename the submitted folders")
        for student, assignments in handed_in.items():
            result = book.get("students", {}).get(display_name(student))  # as the batch keys its rows
            if result is None:
                continue  # not graded in this run (another shard, or no exercise files)
            if not _text(student):  # a folder name that is not text: no nbgrader student can have it
                summary["skipped"].append(display_name(student))
                continue
            graded, scores = cell_scores(result)
            summary["students"] += 1
            try:
                gb.find_student(student)
            except MissingEntry:
                gb.add_student(student)
            for assignment in assignments:
                try:
                    submission = gb.find_submission(assignment, student)
                except MissingEntry:
                    submission = gb.add_submission(assignment, student)
                summary["submissions"] += 1
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.cell.cell_type != "code" or grade.name[:4] not in graded:
                            continue  # graded by hand (a written answer), or not graded in this run
                        grade.auto_score = scores.get(grade.name, 0.0)
                        grade.needs_manual_grade = grade.manual_score is not None  # as nbgrader's autograde
                        summary["cells"] += 1
                        summary["kept_manual"] += grade.manual_score is not None
        gb.db.commit()
    return summary


def _text(name: str) -> bool:
    """A name the gradebook can store (a folder name with a byte that is not UTF-8 is not)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
