"""Which report goes where: the `--format` / `--out` pairs of `grade exNN` and `grade all`.

One run writes every format a workflow needs: the n-th `--format` goes to the n-th `--out`,

    grade all --submission exercises --format junit --out grade.xml --format github --out "$GITHUB_STEP_SUMMARY"

and a single format without `--out` goes to the terminal, as before.

    >>> pair_outputs(["junit", "github"], ["a.xml", "summary.md"], "en")
    [Output(fmt='junit', path='a.xml'), Output(fmt='github', path='summary.md')]
    >>> pair_outputs([], [], "en")          # the report for people, on the terminal
    [Output(fmt='text', path=None)]
    >>> pair_outputs(["json"], [], "en")    # one format, no file: on the terminal
    [Output(fmt='json', path=None)]
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from grader.model.messages import say


class OutputsError(ValueError):
    """The formats and files given do not pair up; the message is in the user's language."""


@dataclass(frozen=True)
class Output:
    fmt: str
    path: object  # a Path, or None for the terminal

    @property
    def to_terminal(self) -> bool:
        return self.path is None


def pair_outputs(formats, outs, lang: str) -> list[Output]:
    """`--format` and `--out` as given, paired in order; OutputsError when they do not pair.

    No format is the text report. One format may go to the terminal (no `--out`); several
    formats need a file each, and no file is written twice.
    """
    formats, outs = list(formats) or ["text"], list(outs)
    if not outs and len(formats) == 1:
        return [Output(formats[0], None)]
    if len(outs) != len(formats):
        raise OutputsError(say("outputs_unpaired", lang, formats=len(formats), outs=len(outs)))
    seen: dict[str, str] = {}
    for fmt, path in zip(formats, outs):
        where = os.path.realpath(path)
        if where in seen:
            raise OutputsError(say("outputs_twice", lang, path=path, first=seen[where], second=fmt))
        seen[where] = fmt
    return [Output(fmt, path) for fmt, path in zip(formats, outs)]
