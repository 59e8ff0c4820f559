"""Run a small action as another uid, in a short-lived forked child (as root).

What only a uid's own process may do: kill(-1) as that user (grader.sandbox.uids), remove its
System V IPC objects without CAP_SYS_ADMIN (grader.sandbox.mountless).

    as_uid(62001, lambda: os.kill(-1, signal.SIGKILL))   # every process of uid 62001
"""

from __future__ import annotations

import os


def as_uid(uid: int, action) -> None:
    """Fork, drop to `uid` (no groups), run `action()` there, wait for it. Nothing runs unless the
    drop held: an action meant for one user must never run as root."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getresuid() == (uid, uid, uid) and os.geteuid() != 0:
                action()
        finally:
            os._exit(0)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
