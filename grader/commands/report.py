"""`grade report OUT [--submissions DIR]`: OUT/report.html from a gradebook already written.

For a folder `grade merge` made (the shards' `grade batch` each wrote the report of their own
share only), or to render again in the other language. The similar pairs need the students'
files: `--submissions DIR`, the folder `grade batch` was given.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click

from grader.commands.paths import AnyPath



@click.command("report")
@click.argument("out", type=AnyPath(file_okay=False, exists=True))
@click.option("--submissions", type=AnyPath(file_okay=False, exists=True), default=None,
              help="学生提交目录，用于比较相似度 / the students' folders, for the similar pairs")
@click.pass_obj
def report(obj, out, submissions):
    """班级报告 OUT/report.html / the cohort report of a gradebook (after grade merge)."""
    from grader.cohort.report_html import write_report

    try:
        book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise click.UsageError(f"{out / 'results.json'}: 不是成绩册 / not a gradebook ({type(err).__name__})") from None
    if not isinstance(book, dict) or not isinstance(book.get("students"), dict):
        raise click.UsageError(f"{out / 'results.json'}: 不是成绩册 / not a gradebook")
    course = obj.course
    try:
        if submissions is None:
            path = write_report(out, book, course, None, obj.lang)
        else:
            from grader.cohort.students import find_students

            with tempfile.TemporaryDirectory(prefix="grade-report-") as staged:  # OUT keeps only the page
                folders = {s.name: s.folder for s in find_students(submissions, course, Path(staged))}
                path = write_report(out, book, course, folders, obj.lang, cohort=submissions)
    except ImportError as err:
        raise click.UsageError(f"pip install {err.name}: 生成报告需要它 / the report needs it") from None
    click.echo(f"-> {path}")
