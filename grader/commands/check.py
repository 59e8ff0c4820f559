"""`grade check`: the kit's self-test, for instructors and CI; `--mutants`: how strong the checks are."""

from __future__ import annotations

import sys

import click


@click.command("check")
@click.argument("exercises", nargs=-1)
@click.option("--only", "only", multiple=True, help="只检查这些练习 / only these exercises")
@click.option("--write-stubs", is_flag=True, default=False,
              help="先由参考答案的答案区重写存根 / first write each stub from its reference's solution regions")
@click.option("--mutants", is_flag=True, default=False,
              help="参考答案的变异体，看隐藏检查有多强：列出通过全部检查的那些（报告，不是门槛）/ mutants of the "
                   "references, how strong the hidden checks are: the survivors listed (a report, not a gate: exit 0)")
@click.option("--max-mutants", "most", type=click.IntRange(min=1), default=None,
              help="每个练习最多评这么多个变异体 / at most this many mutants per exercise")
@click.option("--budget", type=click.FloatRange(min=0), default=600.0, show_default=True,
              help="每个练习的秒数上限，估计超出就跳过（0：不限）/ seconds per exercise; an exercise whose "
                   "mutants would take longer is left out (0: no limit)")
@click.pass_obj
def check_command(obj, exercises, only, write_stubs, mutants, most, budget):
    """自检：编写规则、存根全部失败、参考全部通过、错误都被识别 / the kit's self-test.

    EXERCISES: 只检查这些练习（同 --only）/ only these exercises (as --only).
    """
    from grader.model.course import CourseError

    try:
        course = obj.loaded_course()
    except CourseError as err:  # an authoring fault of course.toml itself: said with its file
        click.echo(f"  ✗ {err}", err=True)
        sys.exit(1)
    try:
        ids = [course.exercise(ex_id).id for ex_id in list(exercises) + list(only)]
    except CourseError as err:
        raise click.UsageError(str(err)) from None
    if write_stubs:
        from grader.build.scaffold import write_stubs as write

        for path in write(course, ids or [e.id for e in course.exercises]):
            click.echo(f"wrote {path}")
    if mutants:
        try:
            from grader.build.mutant_check import run_mutants
        except ModuleNotFoundError as err:
            if (err.name or "").partition(".")[0] != "cosmic_ray":
                raise
            raise click.UsageError("--mutants 需要 cosmic-ray（教师版的 instructor 依赖）/ --mutants needs "
                                   "cosmic-ray (the instructor extra): pip install cosmic-ray") from None
        run_mutants(course, ids or [e.id for e in course.exercises], most=most, budget=budget or None)
        sys.exit(0)
    from grader.build.selfcheck import run_selfcheck

    sys.exit(run_selfcheck(course, obj.lang, only=ids or None))
