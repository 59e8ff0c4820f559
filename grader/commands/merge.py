"""`grade merge OUT1 OUT2 … --out OUT`: join the gradebooks of `grade batch --shard` runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.cohort.batch import OutError, check_out, merge_gradebooks
from grader.cohort.gradebook import held_cohort
from grader.commands.paths import AnyPath


@click.command("merge")
@click.argument("folders", nargs=-1, required=True, type=AnyPath(file_okay=False, exists=True))
@click.option("--out", "out", type=AnyPath(), required=True)
@click.pass_obj
def merge(obj, folders, out):
    """合并分片的成绩 / merge the gradebooks of `grade batch --shard` runs."""
    for folder in folders:
        if not (folder / "results.json").is_file():
            raise click.UsageError(f"{folder}: 没有 results.json / has no results.json")
    try:
        for folder in folders:
            check_out(folder, out)  # not a shard's own folder, a folder we can write
        for cohort in {held_cohort(folder) for folder in folders} - {None}:
            check_out(Path(cohort), out)  # not a student's folder of the cohort the shards graded
        book = merge_gradebooks(list(folders), out)
    except OutError as err:
        raise click.UsageError(str(err)) from None
    except OSError as err:
        click.echo(f"Error: 无法写入成绩 / cannot write the gradebook: {err}", err=True)
        from grader.run.grading import GRADER_FAULT

        sys.exit(GRADER_FAULT)  # not 1 (no check failed): the same command again writes it
    click.echo(f"{len(book['students'])} 名学生 / students -> {out / 'grades.csv'}")
