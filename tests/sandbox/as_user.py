"""Running a command as an ordinary user (uid 61999 unless told, no one else's) from a root test run,
or as root where other uids can read the interpreter (the container tier's workers drop to one).

An interpreter installed under /root (pyenv, here) cannot be reached by another uid: the
command then runs in a private mount namespace where /root is a world-readable tmpfs holding
only the interpreter's installation, bound back in. Needs root, `unshare` and `setpriv`.

    >>> prefix = as_user_prefix(folder)        # folder: a world-readable scratch folder
    >>> subprocess.run([*prefix, grade, "ex01", ...], cwd="/", env=user_env(folder / "home"))
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

USER = 61999

# Called as: script FOLDER HOME COMMAND...; FOLDER is a mount point for HOME (the installation)
# while /root is covered.
UNDER_ROOT = """#!/bin/sh
exec unshare -m sh -c '
mkdir -p "$0/python" && mount --bind "$1" "$0/python" &&
mount -t tmpfs -o mode=755 tmpfs /root && mkdir -p "$1" && mount --bind "$0/python" "$1" &&
shift && exec {become} "$@"' "$@"
"""
ELSEWHERE = """#!/bin/sh
shift 2
exec {become} "$@"
"""
BECOME = "setpriv --reuid={uid} --regid={uid} --clear-groups"

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"),
                                reason="needs root to start an ordinary user's run here")


def as_user_prefix(folder: Path, uid: int | None = USER) -> list[str]:
    """The command prefix that runs what follows as `uid` (None: as root, with the interpreter
    readable by every uid all the same); `folder` holds its script (and is the mount point it
    needs), so it must outlive the command."""
    home = os.path.realpath(sys.base_prefix)
    text = UNDER_ROOT if home.startswith("/root/") else ELSEWHERE
    script = Path(folder) / f"asuser-{uid or 0}.sh"
    script.write_text(text.format(become=BECOME.format(uid=uid) if uid is not None else ""))
    script.chmod(0o755)
    os.chmod(folder, 0o755)
    return [str(script), str(folder), home]


def passable_folder(prefix: str) -> Path:
    """A new scratch folder every uid may pass through (not under /tmp or pytest's folders, which
    are their owner's alone): where a run whose workers drop to another uid keeps its files.
    The caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    os.chmod(folder, 0o755)
    return folder


def user_env(home: Path, **more: str) -> dict:
    """The environment of a user's run: PATH, HOME and `more`, and the kit under test (PYTHONPATH,
    when this run has one) rather than whichever copy the environment's install points at."""
    kit = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **kit, **more}
