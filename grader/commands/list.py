"""`grade list`: every exercise with its title, section, points and state."""

from __future__ import annotations

import sys

import click

from grader.commands.paths import AnyPath



@click.command("list")
@click.option("--submission", type=AnyPath(), default=None,
              help="提交目录 / submission folder (default ./exercises)")
@click.option("--color/--no-color", default=None, help="彩色输出 / colored text")
@click.pass_obj
def list_command(obj, submission, color):
    """列出练习：标题、状态、得分、章节 / list the exercises: title, state, points, section."""
    from grader.report.layout import terminal_width
    from grader.student.progress import status_lines, student_folder

    use_color = sys.stdout.isatty() if color is None else color
    click.echo("\n".join(status_lines(obj.course, student_folder(submission), obj.lang, color=use_color,
                                      compact=True, width=terminal_width())))
