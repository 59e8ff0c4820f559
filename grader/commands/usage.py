"""click's usage errors in the user's language: a missing argument, an unknown option or command.

click writes them in English (its gettext catalog follows the system's locale, not `--lang`).
`in_language(error, "zh")` gives the same error shown in Chinese, its message and its frame
("Usage:", "Try … for help.", "Error:") translated through grader.model.messages.CLICK_ZH; the
kit's own usage errors are already in the user's language and only get the frame.

    $ grade hint
    用法：grade hint [OPTIONS] EXERCISE_ID
    运行 'grade hint -h' 查看帮助。

    错误：缺少参数 'EXERCISE_ID'。
"""

from __future__ import annotations

import click

from grader.model.messages import click_text


class LocalizedUsageError(click.UsageError):
    """A usage error shown in `lang` (exit code 2, as every usage error)."""

    def __init__(self, error: click.UsageError, lang: str):
        super().__init__(error.format_message(), error.ctx)
        self.lang = lang

    def format_message(self) -> str:
        return click_text(self.message, self.lang)

    def show(self, file=None) -> None:
        ctx = self.ctx
        err = file is None  # click's own: standard error
        color = ctx.color if ctx is not None else None
        if ctx is not None:
            formatter = ctx.make_formatter()
            formatter.write_usage(ctx.command_path, " ".join(ctx.command.collect_usage_pieces(ctx)),
                                  prefix=click_text("Usage:", self.lang))
            help_names = ctx.command.get_help_option_names(ctx) if ctx.command.get_help_option(ctx) else ()
            hint = ""
            if help_names:
                hint = click_text(f"Try '{ctx.command_path} {max(help_names, key=len)}' for help.", self.lang) + "\n"
            click.echo(f"{formatter.getvalue().rstrip()}\n{hint}", file=file, err=err, color=color)
        click.echo(click_text(f"Error: {self.format_message()}", self.lang), file=file, err=err, color=color)


def in_language(error: click.UsageError, lang: str) -> click.UsageError:
    """`error` as it is in English (click's own language), else shown in `lang`."""
    if lang == "en" or isinstance(error, LocalizedUsageError):
        return error
    return LocalizedUsageError(error, lang)
