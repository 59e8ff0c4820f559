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

from grader import __version__
from grader.commands.paths import AnyPath
from grader.model.course import Course, CourseError, load_course
from grader.commands.check import check_command
from grader.commands.grade import make_grade_command
from grader.commands.hint import hint_command
from grader.commands.list import list_command
from grader.commands.usage import in_language
from grader.model.messages import default_lang

EXERCISE_ID = re.compile(r"^ex\d\d$")


class CourseContext:
    """Shared state for the commands: the course, loaded once, and the chosen language."""

    def __init__(self, course_path: Path | None, lang: str | None):
        self._course_path = course_path
        self._course: Course | None = None
        self.lang = lang or default_lang()

    def loaded_course(self) -> Course:
        """The course; a bad course.toml raises CourseError (`grade check` says it as an authoring fault)."""
        if self._course is None:
            self._course = load_course(self._course_path)
        return self._course

    @property
    def course(self) -> Course:
        """The course; a bad course.toml is a usage error (said with its file, exit 2)."""
        try:
            return self.loaded_course()
        except CourseError as err:
            raise click.UsageError(str(err)) from None


def lang_first(args: list[str]) -> list[str]:
    """`--lang X` (or `--lang=X`) moved before the command, wherever it was written.

    `grade hint ex01 --lang en` and `grade --lang en hint ex01` then read the same, for every
    command; the last one given wins. Nothing after `--` is touched.

    >>> lang_first(["hint", "ex01", "--lang", "en"])
    ['--lang', 'en', 'hint', 'ex01']
    """
    rest, lang, i = [], None, 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == "--lang" and i + 1 < len(args):
            lang, i = args[i + 1], i + 2
            continue
        if arg.startswith("--lang="):
            lang, i = arg.partition("=")[2], i + 1
            continue
        rest.append(arg)
        i += 1
    return (["--lang", lang] if lang is not None else []) + rest


def _lang_given(args: list[str]) -> str:
    """The language `--lang` asks for in raw arguments (when it is a known one), else the default."""
    moved = lang_first(list(args))
    return moved[1] if moved[:1] == ["--lang"] and moved[1] in ("zh", "en") else default_lang()


class GradeGroup(click.Group):
    """A click group where `grade ex03` and `grade all` are commands made from course.toml."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, lang_first(list(args)))

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as err:  # `grade --colour`, `grade lsit`: the language is not parsed yet
            raise in_language(err, _lang_given(args)) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as err:  # a subcommand's: its missing argument, unknown option
            lang = ctx.obj.lang if isinstance(ctx.obj, CourseContext) else ctx.params.get("lang") or default_lang()
            raise in_language(err, lang) from None

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


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="grade", message="%(prog)s %(version)s")
@click.option("--lang", type=click.Choice(["zh", "en"]), default=None,
              help="语言，可写在任何子命令前后 / language, before or after any command (default: GRADE_LANG, then the locale)")
@click.option("--course", "course_path", type=AnyPath(), default=None, envvar="GRADE_COURSE",
              help="course.toml (default: the kit's own)")
@click.pass_context
def main(ctx, lang, course_path):
    """从零构建 GPT：练习评分工具 / grader for the build-a-GPT course.

    \b
    学生 / students:    grade list | grade ex03 | grade all | grade hint ex03
    教师 / instructors: grade all --reference | grade check
    """
    ctx.obj = CourseContext(course_path, lang)


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
    ("data", "grader.commands.data:data", "数据：下载或指定 tiny Shakespeare / get the data"),
    ("init", "grader.commands.init:init", "写出练习目录 / write a folder with the exercises"),
    ("gradescope", "grader.commands.gradescope:gradescope",
     "生成 Gradescope 自动评分包 / build a Gradescope autograder bundle"),
    ("status", "grader.commands.status:status", "进度：每个练习的状态 / progress of every exercise"),
    ("watch", "grader.commands.watch:watch", "保存即评分 / re-grade on every save"),
    ("release", "grader.commands.release:release", "生成学生发行版 / build the student release"),
    ("nbgrader", "grader.commands.nbgrader:nbgrader_command", "生成 nbgrader 课程目录 / build nbgrader assignments"),
    ("batch", "grader.commands.batch:batch", "批量评分 / grade a cohort"),
    ("merge", "grader.commands.merge:merge", "合并分片成绩 / merge sharded gradebooks"),
    ("report", "grader.commands.report:report", "班级报告 report.html / the cohort report of a gradebook"),
    ("new", "grader.commands.new:new", "新建一个练习 / scaffold a new exercise"),
    ("close-secrets", "grader.commands.close_secrets:close_secrets",
     "容器模式：让工作进程读不到秘密 / the container tier: close the kit's secrets to other users"),
):
    main.add_command(LazyCommand(_name, _target, _help))
main.add_command(list_command)
main.add_command(hint_command)
main.add_command(check_command)


_interrupted = False


def _note_interrupts() -> None:
    """Ctrl-C raises KeyboardInterrupt as before, and is remembered for the exit code (130)."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return  # ignored (a background job) or someone else's: left alone

    def interrupted(signum, frame):
        global _interrupted
        _interrupted = True
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, interrupted)


def entry() -> None:
    """The console script. Exits without tearing torch down (which would only cost time)."""
    _note_interrupts()
    try:
        main.main(prog_name="grade")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, (int, type(None))):
            click.echo(stop.code, err=True)
        if code == 1 and _interrupted:
            code = 130  # Ctrl-C (click said "Aborted!"): as a shell reports it, not 1 ("a check failed")
    except OSError as err:  # a folder that refuses what its modes allowed (/proc as root), a disk that fills
        where = f" {err.filename}" if err.filename else ""
        click.echo(f"grade: 无法读写 / cannot read or write{where}: {err.strerror or err}", err=True)
        from grader.run.grading import GRADER_FAULT

        code = GRADER_FAULT  # not 1 (a check failed) nor 2 (usage): the grader could not finish
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
