"""`grade release OUT`: the student kit."""

from __future__ import annotations

from pathlib import Path

import click

from grader.build.release import build_release
from grader.commands.paths import OutputFolder


@click.command("release")
@click.argument("out", type=OutputFolder())
@click.option("--force", is_flag=True, help="覆盖已有目录 / replace OUT if it exists")
@click.pass_obj
def release(obj, out: Path, force: bool):
    """生成学生发行版 / build the student release in OUT.

    存根、评分工具、数据集目录、course.toml、学生 README，以及录制的公开检查答案；
    不含参考答案与隐藏测试。/ Stubs, the grader, the data set catalog, course.toml, a
    student README and the recorded answers to the public checks; no solutions, no hidden
    tests.
    """
    build_release(obj.course, out, force=force)
