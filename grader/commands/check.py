"""`grade check`: the kit's self-test, for instructors and CI."""

from __future__ import annotations

import sys

import click


@click.command("check")
@click.option("--only", "only", multiple=True, help="只检查这些练习 / only these exercises")
@click.pass_obj
def check_command(obj, only):
    """自检：存根全部失败、参考全部通过、错误都被识别 / the kit's self-test."""
    from grader.build.selfcheck import run_selfcheck

    sys.exit(run_selfcheck(obj.course, obj.lang, only=list(only) or None))
