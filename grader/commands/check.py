"""`grade check`: the kit's self-test, for instructors and CI."""

from __future__ import annotations

import sys

import click


@click.command("check")
@click.option("--only", "only", multiple=True, help="只检查这些练习 / only these exercises")
@click.option("--write-stubs", is_flag=True, default=False,
              help="先由参考答案的答案区重写存根 / first write each stub from its reference's solution regions")
@click.option("--mutants", is_flag=True, default=False,
              help="参考答案的变异体，看隐藏检查有多强 / mutants of the references: how strong the hidden checks are")
@click.pass_obj
def check_command(obj, only, write_stubs, mutants):
    """自检：编写规则、存根全部失败、参考全部通过、错误都被识别 / the kit's self-test."""
    from grader.model.course import CourseError

    try:
        course = obj.course
    except CourseError as err:  # an authoring fault of course.toml itself: said with its file
        click.echo(f"  ✗ {err}", err=True)
        sys.exit(1)
    if write_stubs:
        from grader.build.scaffold import write_stubs as write

        for path in write(course, list(only) or [e.id for e in course.exercises]):
            click.echo(f"wrote {path}")
    if mutants:
        from grader.build.mutants import run_mutants

        sys.exit(run_mutants(course, list(only) or None, lang=obj.lang))
    from grader.build.selfcheck import run_selfcheck

    sys.exit(run_selfcheck(course, obj.lang, only=list(only) or None))
