"""`grade nbgrader OUT`: an nbgrader course folder."""

from __future__ import annotations

from pathlib import Path

import click

from grader.build.nbgrader_export import build_nbgrader
from grader.commands.paths import OutputFolder


@click.command("nbgrader")
@click.argument("out", type=OutputFolder())
@click.option("--force", is_flag=True, help="覆盖已有目录 / replace OUT if it exists")
@click.pass_obj
def nbgrader_command(obj, out: Path, force: bool):
    """生成 nbgrader 课程目录 / build the nbgrader course folder in OUT.

    nbgrader_config.py 与每个作业一个源笔记本（source/ch05/ch05.ipynb …）：参考答案、
    公开检查与隐藏测试都来自命令行用的同一套练习与检查。/ nbgrader_config.py and one
    source notebook per assignment; solutions, visible tests and hidden tests come from the
    same exercises and checks as the command line.
    """
    build_nbgrader(obj.course, out, force=force)
