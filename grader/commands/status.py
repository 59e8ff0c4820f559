"""`grade status`: 未开始 / 未通过 / 通过, the points of the last and of the best attempt of every exercise."""

from __future__ import annotations

import click

from grader.commands.paths import AnyPath
from grader.student.progress import status_lines, student_folder


@click.command("status")
@click.option("--submission", type=AnyPath(), default=None,
              help="提交目录 / submission folder (default ./exercises)")
@click.option("--color/--no-color", default=None, help="彩色输出 / colored text")
@click.pass_obj
def status(obj, submission, color):
    """进度：每个练习的状态、最近一次与最好一次的得分 / every exercise's state, last and best attempt."""
    import sys

    folder = student_folder(submission)
    if submission and not folder.is_dir():
        from grader.model.messages import say

        raise click.UsageError(say("missing_folder", obj.lang, path=folder))
    from grader.report.layout import terminal_width

    use_color = sys.stdout.isatty() if color is None else color
    click.echo("\n".join(status_lines(obj.course, folder, obj.lang, color=use_color, width=terminal_width())))
