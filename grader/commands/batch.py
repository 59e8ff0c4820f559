"""`grade batch DIR --out OUTDIR`: grade a cohort."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from grader.cohort.batch import FORMAT_EXT, run_batch
from grader.model.course import Course


def _parse_shard(text: str | None) -> tuple[int, int]:
    if not text:
        return (1, 1)
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise click.UsageError(f"--shard 应为 i/n，1 ≤ i ≤ n / must be i/n with 1 <= i <= n: {text!r}")
    return int(match.group(1)), int(match.group(2))


@click.command("batch")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="输出目录 / output folder (grades.csv, results.json)")
@click.option("-j", "--jobs", type=int, default=None, help="并行评分进程数 / parallel judges (default: CPUs)")
@click.option("--shard", default=None, help="只评第 i 份（共 n 份）/ grade shard i of n, e.g. 2/4")
@click.option("--only", "only", multiple=True, help="只评这些练习或作业 / only these exercises or assignments")
@click.option("--format", "formats", multiple=True, type=click.Choice(sorted(FORMAT_EXT)),
              help="每个学生另写一份报告 / also write a report per student (OUTDIR/reports/)")
@click.option("--progress/--no-progress", default=None, help="进度条 / progress bar (default: on a terminal)")
@click.pass_obj
def batch(obj, folder, out, jobs, shard, only, formats, progress):
    """批量评分：DIR/<学生>/exNN_*.py 或 nbgrader 的 submitted/ / grade a cohort.

    \b
    OUTDIR/grades.csv     一行一个学生 / a row per student, a column per exercise, total
    OUTDIR/results.json   每个学生的每项检查 / every check of every student
    中断后重跑只评还没评完的学生 / a rerun after an interruption resumes.
    """
    course = obj.course
    lang = obj.lang
    if not folder.is_dir():
        from grader.model.messages import say

        raise click.UsageError(say("missing_folder", lang, path=folder))
    ids = _select(course, only)
    book = run_batch(course, folder, out, jobs=jobs or os.cpu_count() or 1, shard=_parse_shard(shard), ids=ids,
                     lang=lang, formats=list(formats), progress=progress)
    n = len(book["students"])
    total = sum(e["max_score"] for e in book["exercises"])
    mean = sum(s["score"] for s in book["students"].values()) / n if n else 0
    click.echo(f"{n} 名学生 / students, 平均 / mean {mean:.1f}/{total} -> {out / 'grades.csv'}, {out / 'results.json'}")


def _select(course: Course, only) -> list[str]:
    if not only:
        return [e.id for e in course.exercises]
    wanted = {w for o in only for w in o.split(",") if w}
    ids = [e.id for e in course.exercises if e.id in wanted or e.assignment in wanted]
    unknown = wanted - {e.id for e in course.exercises} - {a.id for a in course.assignments}
    if unknown or not ids:
        raise click.UsageError(f"未知练习或作业 / unknown exercise or assignment: {', '.join(sorted(unknown)) or only}")
    return ids
