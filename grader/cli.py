"""The `grade` command.

Students: `grade list`, `grade ex03`, `grade all`, `grade hint ex03`.
Instructors and CI: `grade all --reference`, `grade check`, `grade all --submission DIR
--format json --out FILE`. Exit codes: 0 every check passed, 1 a check failed, 2 a usage
error (unknown exercise, missing folder, bad course.toml) with a clear message.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click

from grader.course import Course, CourseError, load_course
from grader.messages import say

EXERCISE_ID = re.compile(r"^ex\d\d$")


def default_lang() -> str:
    """--lang wins; then GRADE_LANG; then an English locale gives English; else Chinese."""
    explicit = os.environ.get("GRADE_LANG")
    if explicit in ("zh", "en"):
        return explicit
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "en" if value.lower().startswith("en") else "zh"
    return "zh"


class CourseContext:
    """Shared state for the commands: the course, loaded once, and the chosen language."""

    def __init__(self, course_path: Path | None, lang: str | None):
        self._course_path = course_path
        self._course: Course | None = None
        self.lang = lang or default_lang()

    @property
    def course(self) -> Course:
        if self._course is None:
            try:
                self._course = load_course(self._course_path)
            except CourseError as err:
                raise click.UsageError(str(err)) from None
        return self._course


class GradeGroup(click.Group):
    """A click group where `grade ex03` and `grade all` are commands made from course.toml."""

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is not None:
            return command
        if EXERCISE_ID.match(name) or name in ("all", "exNN"):
            return make_grade_command(name)
        return None

    def list_commands(self, ctx):
        return sorted(super().list_commands(ctx)) + ["all", "exNN"]

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name and EXERCISE_ID.match(name):
            return name, make_grade_command(name), args[1:]
        return super().resolve_command(ctx, args)


def grading_options(func):
    options = [
        click.option("--submission", "submission", type=click.Path(path_type=Path), default=None,
                     help="提交目录 / submission folder (default ./exercises)"),
        click.option("--reference", is_flag=True, help="评分参考答案 / grade the reference solutions"),
        click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "gradescope", "github"]),
                     default="text", show_default=True),
        click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="写入文件 / write to FILE"),
        click.option("--color/--no-color", default=None, help="彩色输出 / colored text"),
        click.option("--lang", "lang", type=click.Choice(["zh", "en"]), default=None,
                     help="语言 / language (also before the command: grade --lang en ex03)"),
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
    def command(obj: CourseContext, submission, reference, fmt, out, color, lang):
        from grader.grading import grade_command

        if lang:
            obj.lang = lang
        course = obj.course
        if name == "all":
            ids = [e.id for e in course.exercises]
        else:
            try:
                ids = [course.exercise(name).id]
            except CourseError:
                raise click.UsageError(say("unknown_exercise", obj.lang, id=name,
                                           known=", ".join(e.id for e in course.exercises))) from None
        code = grade_command(course, ids, submission=submission, reference=reference, fmt=fmt, out=out,
                             color=color, lang=obj.lang)
        sys.exit(code)

    return command


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--lang", type=click.Choice(["zh", "en"]), default=None, help="语言 / language (default: locale)")
@click.option("--course", "course_path", type=click.Path(path_type=Path), default=None, envvar="GRADE_COURSE",
              help="course.toml (default: the kit's own)")
@click.pass_context
def main(ctx, lang, course_path):
    """从零构建 GPT：练习评分工具 / grader for the build-a-GPT course.

    \b
    学生 / students:    grade list | grade ex03 | grade all | grade hint ex03
    教师 / instructors: grade all --reference | grade check
    """
    ctx.obj = CourseContext(course_path, lang)


@main.command("list")
@click.option("--submission", type=click.Path(path_type=Path), default=None,
              help="提交目录 / submission folder (default ./exercises)")
@click.option("--color/--no-color", default=None, help="彩色输出 / colored text")
@click.pass_obj
def list_command(obj: CourseContext, submission, color):
    """列出练习：标题、状态、得分、章节 / list the exercises: title, state, points, section."""
    from grader.progress import status_lines, student_folder

    use_color = sys.stdout.isatty() if color is None else color
    click.echo("\n".join(status_lines(obj.course, student_folder(submission), obj.lang, color=use_color,
                                      compact=True)))


@main.command("hint")
@click.argument("exercise_id")
@click.option("--level", type=int, default=None, help="第几级提示 / which level (default: the next one)")
@click.option("--submission", type=click.Path(path_type=Path), default=None,
              help="提交目录（记录看到第几级）/ submission folder (remembers the level seen)")
@click.pass_obj
def hint_command(obj: CourseContext, exercise_id, level, submission):
    """显示下一级提示（或 --level N 那一级）/ show the exercise's next hint (or level N)."""
    from grader.hints import next_hint
    from grader.progress import student_folder

    course = obj.course
    try:
        ex = course.exercise(exercise_id)
    except CourseError:
        raise click.UsageError(say("unknown_exercise", obj.lang, id=exercise_id,
                                   known=", ".join(e.id for e in course.exercises))) from None
    if level is not None and not 1 <= level <= len(ex.hints):
        raise click.UsageError(say("hint_levels", obj.lang, id=ex.id, total=len(ex.hints)))
    click.echo(next_hint(ex, obj.lang, level=level, state_dir=student_folder(submission)))


@main.command("check")
@click.option("--only", "only", multiple=True, help="只检查这些练习 / only these exercises")
@click.pass_obj
def check_command(obj: CourseContext, only):
    """自检：存根全部失败、参考全部通过、错误都被识别 / the kit's self-test."""
    from grader.selfcheck import run_selfcheck

    sys.exit(run_selfcheck(obj.course, obj.lang, only=list(only) or None))


class LazyCommand(click.Command):
    """A command whose module is imported only when it runs (keeps `grade ex03` start-up lean)."""

    def __init__(self, name: str, target: str, help_text: str):
        super().__init__(name, help=help_text, context_settings={"ignore_unknown_options": True,
                                                                 "allow_extra_args": True, "help_option_names": []})
        self.target = target

    def invoke(self, ctx):
        module_name, _, attr = self.target.partition(":")
        import importlib

        command = getattr(importlib.import_module(module_name), attr)
        return command.main(ctx.args, prog_name=f"grade {self.name}", standalone_mode=False, obj=ctx.obj)


for _name, _target, _help in (
    ("data", "grader.datasets_cli:data", "数据：下载或指定 tiny Shakespeare / get the data"),
    ("status", "grader.progress:status", "进度：每个练习的状态 / progress of every exercise"),
    ("watch", "grader.watch:watch", "保存即评分 / re-grade on every save"),
    ("release", "grader.release:release", "生成学生发行版 / build the student release"),
    ("nbgrader", "grader.nbgrader_export:nbgrader_command", "生成 nbgrader 课程目录 / build nbgrader assignments"),
    ("batch", "grader.batch:batch", "批量评分 / grade a cohort"),
    ("merge", "grader.batch:merge", "合并分片成绩 / merge sharded gradebooks"),
):
    main.add_command(LazyCommand(_name, _target, _help))


def entry() -> None:
    """The console script. Exits without tearing torch down (measured: about 0.3 s saved)."""
    try:
        main.main(prog_name="grade")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, (int, type(None))):
            click.echo(stop.code, err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
