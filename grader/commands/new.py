"""`grade new exNN --assignment A`: scaffold a new exercise (grader.build.scaffold)."""

import click



@click.command("new")
@click.argument("exercise_id")
@click.option("--assignment", required=True, help="作业 id（新的会加进 course.toml）/ the assignment's id (a new one is added)")
@click.option("--name", default="exercise", show_default=True, help="文件名的后半 / the file's name after exNN_")
@click.pass_obj
def new(obj, exercise_id, assignment, name):
    """新建一个练习：参考答案、存根、检查、提示与 course.toml 的表 / scaffold a new exercise.

    \b
    Then: grade EXERCISE_ID --reference, grade check --only EXERCISE_ID (see docs/instructors/authoring.md).
    """
    from grader.build.scaffold import ScaffoldError, new_exercise

    try:
        written = new_exercise(obj.course, exercise_id, assignment=assignment, name=name)
    except ScaffoldError as err:
        raise click.UsageError(str(err)) from None
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"next: grade {exercise_id} --reference; grade check --only {exercise_id}")
