"""Running a command as an ordinary user (uid 61999 unless told, no one else's) from a root test run.

The interpreter here lives under /root (pyenv), which another uid cannot enter: the command
runs in a private mount namespace where /root is a world-readable tmpfs holding only
/root/.pyenv, bound back in. Needs root, `unshare` and `setpriv`.

    >>> prefix = as_user_prefix(folder)        # folder: a world-readable scratch folder
    >>> subprocess.run([*prefix, grade, "ex01", ...], cwd="/", env=env)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

USER = 61999

SCRIPT = """#!/bin/sh
exec unshare -m sh -c '
mkdir -p "$0/.pyenv" && mount --bind /root/.pyenv "$0/.pyenv" &&
mount -t tmpfs -o mode=755 tmpfs /root && mkdir /root/.pyenv && mount --bind "$0/.pyenv" /root/.pyenv &&
exec setpriv --reuid={uid} --regid={uid} --clear-groups "$@"' "$@"
"""

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"),
                                reason="needs root to start an ordinary user's run here")


def as_user_prefix(folder: Path, uid: int = USER) -> list[str]:
    """The command prefix that runs what follows as `uid`; `folder` holds its script (and is
    the mount point it needs), so it must outlive the command."""
    script = Path(folder) / f"asuser-{uid}.sh"
    script.write_text(SCRIPT.format(uid=uid))
    script.chmod(0o755)
    os.chmod(folder, 0o755)
    return [str(script), str(folder)]
