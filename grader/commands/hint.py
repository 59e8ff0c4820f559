"""`grade hint exNN`: the next hint level each time (or `--level N`)."""

from __future__ import annotations

import click

from grader.commands.paths import AnyPath
from grader.model.course import CourseError
from grader.model.messages import say


@click.command("hint")
@click.argument("exercise_id")
@click.option("--level", type=int, default=None, help="第几级提示 / which level (default: the next one)")
@click.option("--submission", type=AnyPath(), default=None,
              help="提交目录（记录看到第几级）/ submission folder (remembers the level seen)")
@click.pass_obj
def hint_command(obj, exercise_id, level, submission):
    """显示下一级提示（或 --level N 那一级）/ show the exercise's next hint (or level N)."""
    from grader.student.hints import ladder, next_hint
    from grader.student.progress import student_folder

    course = obj.course
    try:
        ex = course.exercise(exercise_id)
    except CourseError:
        raise click.UsageError(say("unknown_exercise", obj.lang, id=exercise_id,
                                   known=", ".join(e.id for e in course.exercises))) from None
    if level is not None and not 1 <= level <= len(ladder(ex)):
        raise click.UsageError(say("hint_levels", obj.lang, id=ex.id, total=len(ladder(ex))))
    folder = student_folder(submission)
    if submission and not folder.is_dir():  # as grade status and grade exNN say it
        raise click.UsageError(say("missing_folder", obj.lang, path=folder))
    click.echo(next_hint(ex, obj.lang, level=level, state_dir=folder))
