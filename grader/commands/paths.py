"""The path parameters of every command: click's Path, but an empty one is a usage error.

An empty argument is a script's unset variable (`grade batch "$SUBMISSIONS" --out "$OUT"`),
and `Path("")` is the working folder: a batch would grade the kit as a cohort, or write its
gradebook, a release or a Gradescope bundle into whatever folder the command ran in.

    >>> AnyPath().convert("", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: 不能为空 / must not be empty
"""

from __future__ import annotations

from pathlib import Path

import click


class AnyPath(click.Path):
    """`click.Path(path_type=Path, ...)` that refuses an empty string."""

    def __init__(self, **options):
        super().__init__(path_type=Path, **options)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("不能为空 / must not be empty", param, ctx)
        return super().convert(value, param, ctx)
