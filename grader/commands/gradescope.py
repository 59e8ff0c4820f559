"""`grade gradescope OUT.zip`: the Gradescope autograder bundle."""

from __future__ import annotations

from pathlib import Path

import click

from grader.commands.paths import OutputFolder
from grader.report.gradescope import HIDDEN_CHOICES, HIDDEN_VISIBILITY


@click.command("gradescope")
@click.argument("out", type=OutputFolder(file_okay=True))
@click.option("--hidden-visibility", type=click.Choice(HIDDEN_CHOICES), default=HIDDEN_VISIBILITY,
              show_default=True, help="隐藏检查何时可见 / when students see the hidden checks "
                                      "(Gradescope 的 hidden 只用于不计分的测试 / Gradescope's hidden is for tests without points)")
@click.pass_obj
def gradescope(obj, out: Path, hidden_visibility: str):
    """生成 Gradescope 自动评分包 / build a Gradescope autograder bundle (OUT.zip).

    setup.sh（Python ≥ 3.11、CPU 版 torch、本工具包、课程数据）与 run_autograder（在提交里找练习文件，
    隔离评分，写 results/results.json）。/ setup.sh (Python ≥ 3.11, CPU torch, the kit, the
    lesson's data) and run_autograder (finds the exercise files in the upload, grades them
    fenced, writes results/results.json).
    """
    from grader.build.gradescope import build_bundle

    build_bundle(obj.course, out, hidden_visibility=hidden_visibility, lang=obj.lang)
