"""`grade ARGS` run in this process through click's runner, read as a finished process.

A run here skips what a fresh interpreter costs (torch's import, the kit's start-up) and proves
the same contract: the exit code, what is written to stdout and stderr, the files written.
Tests where the process itself is the point (Ctrl-C, kill -9, a kit imported from another
folder, another user) run `grade` as a real process instead.

    >>> run = grade("--lang", "en", "ex01", "--reference")   # doctest: +SKIP
    >>> run.returncode, run.stdout.splitlines()[0]           # doctest: +SKIP
    (0, 'ex01 …  10/10')
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

from click.testing import CliRunner

from grader.commands.main import main


def grade(*args: str, cwd: Path | str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`grade ARGS` in `cwd` with `env` added to the environment, as `subprocess.run` would report it.

    An exception the command did not turn into an exit code is raised here (a grader error a
    real process would print as a traceback)."""
    with contextlib.chdir(cwd or os.getcwd()):
        run = CliRunner(env=env).invoke(main, list(args), prog_name="grade")
    if run.exception is not None and not isinstance(run.exception, SystemExit):
        raise run.exception
    return subprocess.CompletedProcess(["grade", *args], run.exit_code, run.stdout, run.stderr)
