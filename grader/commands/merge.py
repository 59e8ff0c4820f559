"""`grade merge OUT1 OUT2 … --out OUT`: join the gradebooks of `grade batch --shard` runs."""

from __future__ import annotations

from pathlib import Path

import click

from grader.cohort.batch import merge_gradebooks


@click.command("merge")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.pass_obj
def merge(obj, folders, out):
    """合并分片的成绩 / merge the gradebooks of `grade batch --shard` runs."""
    for folder in folders:
        if not (folder / "results.json").is_file():
            raise click.UsageError(f"{folder}: 没有 results.json / has no results.json")
    book = merge_gradebooks(list(folders), out)
    click.echo(f"{len(book['students'])} 名学生 / students -> {out / 'grades.csv'}")
