"""`grade init DIR`: a student's folder with the exercises' stubs."""

from __future__ import annotations

from pathlib import Path

import click

from grader.commands.paths import OutputFolder
from grader.student.init_folder import init_folder


@click.command("init")
@click.argument("out", type=OutputFolder(), default="gpt-exercises")
@click.pass_obj
def init(obj, out: Path):
    """写出练习目录 / write a folder with the exercises to fill in (default ./gpt-exercises).

    之后 / then: cd OUT && grade ex01
    """
    folder = init_folder(obj.course, out)
    click.echo(f"练习已写入 / exercises written to {folder / 'exercises'}  (cd {folder} && grade ex01)")
