"""`grade watch [exNN]`: re-grade an exercise every time its file is saved."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.commands.paths import AnyPath
from grader.model.messages import say
from grader.student.watch import WatchLoop, WatchSession, first_exercise


@click.command("watch")
@click.argument("exercise_id", required=False)
@click.option("--submission", type=AnyPath(), default=None,
              help="提交目录 / submission folder (default ./exercises)")
@click.option("--color/--no-color", default=None, help="彩色输出 / colored text")
@click.pass_obj
def watch(obj, exercise_id, submission, color):
    """保存即评分；h 提示，l 列表，n 下一题，r 重评，q 退出 / re-grade on every save; keys h l n r q."""
    course = obj.course
    lang = obj.lang
    folder = Path(submission) if submission else Path.cwd() / "exercises"
    if not folder.is_dir():
        raise click.UsageError(say("missing_folder", lang, path=folder))
    if exercise_id is None:
        exercise_id = first_exercise(course, folder)
    else:
        known = [e.id for e in course.exercises]
        if exercise_id not in known:
            raise click.UsageError(say("unknown_exercise", lang, id=exercise_id, known=", ".join(known)))
    tty = sys.stdout.isatty()
    click.echo(say("watch_start", lang))
    session = WatchSession(course, folder, lang, picture_dir=Path(folder) / ".grade").start()
    try:
        WatchLoop(session, color=tty if color is None else color, clear=tty).run(exercise_id)
    finally:
        session.close()
