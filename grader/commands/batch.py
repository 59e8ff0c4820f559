"""`grade batch DIR --out OUTDIR`: grade a cohort."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click

from grader.cohort.batch import FORMAT_EXT, CorpusMissing, OutError, ResultsMissing, check_out, run_batch
from grader.commands.options import ISOLATION_OPTION
from grader.commands.paths import AnyPath
from grader.model.course import Course
from grader.model.messages import say
from grader.run.grading import GRADER_FAULT
from grader.sandbox import ZygoteGone


def _one_submission(folder: Path, course: Course) -> bool:
    """Whether DIR's own top level holds a course exercise file (a student's folder given as the
    cohort: graded as "0 students" otherwise)."""
    from grader.model.course import holds_course_files

    names = {ex.file for ex in course.exercises}
    listing = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name in names:
                    listing[entry.name] = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return holds_course_files(listing, course)


def _parse_shard(text: str | None) -> tuple[int, int]:
    if not text:
        return (1, 1)
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise click.UsageError(f"--shard 应为 i/n，1 ≤ i ≤ n / must be i/n with 1 <= i <= n: {text!r}")
    return int(match.group(1)), int(match.group(2))


@click.command("batch")
@click.argument("folder", type=AnyPath(file_okay=False))
@click.option("--out", "out", type=AnyPath(), required=True,
              help="输出目录 / output folder (grades.csv, results.json)")
@click.option("-j", "--jobs", type=int, default=None, help="并行评分进程数 / parallel judges (default: CPUs)")
@click.option("--shard", default=None, help="只评第 i 份（共 n 份）/ grade shard i of n, e.g. 2/4")
@click.option("--only", "only", multiple=True, help="只评这些练习或作业 / only these exercises or assignments")
@click.option("--format", "formats", multiple=True, type=click.Choice(sorted(FORMAT_EXT)),
              help="每个学生另写一份报告 / also write a report per student (OUTDIR/reports/)")
@click.option("--progress/--no-progress", default=None, help="进度条 / progress bar (default: on a terminal)")
@click.option("--nbgrader-db", "nbgrader_db", default=None, metavar="PATH",
              help="把分数写进 nbgrader 的 gradebook（gradebook.db、课程目录或 URL）/ write the scores into "
                   "nbgrader's gradebook (gradebook.db, the course folder, or a database URL)")
@ISOLATION_OPTION
@click.pass_obj
def batch(obj, folder, out, jobs, shard, only, formats, progress, nbgrader_db=None, isolation=None):
    """批量评分：DIR/<学生>/exNN_*.py 或 nbgrader 的 submitted/ / grade a cohort.

    \b
    OUTDIR/grades.csv     一行一个学生 / a row per student, a column per exercise, total
    OUTDIR/results.json   每个学生的每项检查 / every check of every student
    中断后重跑只评还没评完的学生 / a rerun after an interruption resumes.
    """
    course = obj.course
    lang = obj.lang
    if not folder.is_dir():
        raise click.UsageError(say("missing_folder", lang, path=folder))
    if not os.access(folder, os.R_OK | os.X_OK):  # listed but not entered: every student a row of zeros
        raise click.UsageError(f"无法进入文件夹 / cannot enter the folder {folder}: 缺少执行（搜索）权限 / "
                               f"no search (x) permission")
    if _one_submission(folder, course):
        raise click.UsageError(f"{folder} 本身就是一份提交（顶层有练习文件），不是每个学生一个文件夹：评一份用 grade all "
                               f"--submission {folder} / holds exercise files itself: it is one submission, not a "
                               f"folder per student; grade it with grade all --submission {folder}")
    ids = _select(course, only)
    if nbgrader_db:
        _nbgrader_target(folder, nbgrader_db)  # said before anything is graded
    shard_of = _parse_shard(shard)
    if jobs is not None and jobs < 1:
        raise click.UsageError(f"-j 至少为 1 / must be at least 1: {jobs}")
    try:
        check_out(folder, out)  # before anything is graded
        book = run_batch(course, folder, out, jobs=jobs or os.cpu_count() or 1, shard=shard_of, ids=ids,
                         lang=lang, formats=list(formats), progress=progress, isolation=isolation)
    except CorpusMissing as err:  # no student is charged for the kit's data: nothing graded
        error = err.error
        click.echo(getattr(error, "en" if lang == "en" else "zh", str(error)), err=True)
        sys.exit(GRADER_FAULT)
    except ResultsMissing as err:  # graded, but a result could not be kept: the grader could not finish
        click.echo(f"Error: {err}", err=True)
        sys.exit(GRADER_FAULT)
    except OutError as err:
        raise click.UsageError(str(err)) from None
    except ZygoteGone as err:  # the students graded before it are saved: a rerun goes on from there
        from grader.run.grading import gone_text

        click.echo(gone_text(err, lang, batch=True), err=True)
        sys.exit(GRADER_FAULT)
    except OSError as err:  # a disk that fills, a folder removed under us: said, never a traceback
        click.echo(f"Error: 无法写入成绩 / cannot write the gradebook: {err}", err=True)
        sys.exit(GRADER_FAULT)  # not 1 (no check failed): a rerun goes on from there
    n = len(book["students"])
    total = sum(e["max_score"] for e in book["exercises"])
    mean = sum(s["score"] for s in book["students"].values()) / n if n else 0
    noted = sum(1 for s in book["students"].values() if s.get("note"))
    click.echo(say("batch_summary_one" if n == 1 else "batch_summary", lang, n=n, noted=noted, mean=f"{mean:.1f}", total=total,
                   grades=out / "grades.csv", results=out / "results.json"))
    if nbgrader_db:
        _write_nbgrader(book, folder, nbgrader_db)


def _nbgrader_target(folder: Path, db: str) -> str:
    """`--nbgrader-db`: the gradebook's URL, when FOLDER is nbgrader's submitted/ (else a usage error)."""
    from grader.build.nbgrader_gradebook import gradebook_url
    from grader.cohort.batch import is_nbgrader_dir

    if not is_nbgrader_dir(folder):
        raise click.UsageError(f"--nbgrader-db：{folder} 不是 nbgrader 的 submitted/ / is not nbgrader's submitted/ folder")
    return gradebook_url(db)


def _write_nbgrader(book: dict, folder: Path, db: str) -> None:
    """`--nbgrader-db`: the scores into nbgrader's gradebook (grader.build.nbgrader_gradebook)."""
    from grader.build.nbgrader_gradebook import write_scores

    done = write_scores(book, folder, _nbgrader_target(folder, db))
    click.echo(f"nbgrader gradebook: {done['students']} 名学生 / students, {done['submissions']} 份提交 / submissions, "
               f"{done['cells']} 个评分单元格 / grade cells ({done['kept_manual']} 保留人工分 / manual grades kept)")
    if done["skipped"]:
        click.echo(f"nbgrader gradebook: 文件夹名不是文本（不是 UTF-8），没有写入 / folder names that are not text "
                   f"(not UTF-8), not written: {', '.join(done['skipped'])}", err=True)


def _select(course: Course, only) -> list[str]:
    if not only:
        return [e.id for e in course.exercises]
    wanted = {w for o in only for w in o.split(",") if w}
    ids = [e.id for e in course.exercises if e.id in wanted or e.assignment in wanted]
    unknown = wanted - {e.id for e in course.exercises} - {a.id for a in course.assignments}
    if unknown or not ids:
        shown = ", ".join(sorted(unknown)) or " ".join(repr(o) for o in only)  # `--only ""`: shown as typed
        raise click.UsageError(f"未知练习或作业 / unknown exercise or assignment: {shown}")
    return ids
