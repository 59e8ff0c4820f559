"""`grade exNN` and `grade all`: the commands made from course.toml."""

from __future__ import annotations

import sys

import click

from grader.commands.options import ISOLATION_OPTION
from grader.commands.paths import AnyPath, OutputFile
from grader.model.course import CourseError
from grader.model.messages import say
from grader.report.gradescope import HIDDEN_CHOICES
from grader.report.render import FORMATS


def grading_options(func):
    options = [
        click.option("--submission", "submission", type=AnyPath(), default=None,
                     help="提交目录 / submission folder (default ./exercises)"),
        click.option("--reference", is_flag=True, help="评分参考答案 / grade the reference solutions"),
        click.option("--format", "formats", type=click.Choice(FORMATS), multiple=True,
                     help="报告格式（默认 text），可重复，与 --out 按顺序配对 / the report's format (default text); "
                          "repeat it with an --out each to write several in one run"),
        click.option("--out", "outs", type=OutputFile(), multiple=True,
                     help="写入文件，与 --format 按顺序配对 / write to FILE, paired with --format in order"),
        click.option("--hidden-visibility", "hidden_visibility", type=click.Choice(HIDDEN_CHOICES),
                     default=None, help="gradescope: 隐藏检查何时可见 / when students see hidden checks "
                                        "(default after_published)"),
        click.option("--color/--no-color", default=None, help="彩色输出 / colored text"),
        click.option("--lang", "lang", type=click.Choice(["zh", "en"]), default=None,
                     help="语言 / language (also before the command: grade --lang en ex03)"),
        click.option("--show-hidden", is_flag=True, default=False,
                     help="教师用：显示隐藏测试的输入、期望值和输出（学生看到的报告不显示）/ instructors: show hidden "
                          "checks' inputs, expected values and output (a student's report never does)"),
        ISOLATION_OPTION,
        click.option("--show-answers", is_flag=True, default=False,
                     help="教师用：在每个未通过的检查下显示期望的答案和改法（text、json）/ instructors: show the "
                          "expected answer and the fix under each failing check (text, json)"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def make_grade_command(name: str) -> click.Command:
    helps = {"all": "评分全部练习 / grade every exercise",
             "exNN": "评分一个练习：grade ex01 … / grade one exercise: grade ex01 …"}
    @click.command(name=name, help=helps.get(name, f"评分 {name} / grade {name}"))
    @grading_options
    @click.pass_obj
    def command(obj, submission, reference, formats, outs, hidden_visibility, color, lang, show_hidden, isolation,
                show_answers):
        from grader.report.render import ANSWER_FORMATS
        from grader.run.grading import grade_command
        from grader.run.outputs import OutputsError, pair_outputs

        if lang:
            obj.lang = lang
        course = obj.course
        try:
            outputs = pair_outputs(formats, outs, obj.lang)
        except OutputsError as err:
            raise click.UsageError(str(err)) from None
        if show_answers and any(o.fmt not in ANSWER_FORMATS for o in outputs):
            raise click.UsageError(say("show_answers_formats", obj.lang))
        if show_answers and not course.solutions_dir.is_dir():  # a student's release: answers are earned
            raise click.UsageError(say("show_answers_release", obj.lang))
        if name == "all":
            ids = [e.id for e in course.exercises]
        else:
            try:
                ids = [course.exercise(name).id]
            except CourseError:
                raise click.UsageError(say("unknown_exercise", obj.lang, id=name,
                                           known=", ".join(e.id for e in course.exercises))) from None
        from grader.student.progress import record_attempt

        code = grade_command(course, ids, submission=submission, reference=reference, outputs=outputs,
                             color=color, lang=obj.lang, hidden_visibility=hidden_visibility,
                             show_hidden=show_hidden, show_answers=show_answers, isolation=isolation,
                             record=record_attempt)
        sys.exit(code)

    return command
