"""The container tier: the container is the boundary; inside it, workers run as another uid.

Chosen explicitly (`--isolation container`, `GRADE_ISOLATION=container`, the Gradescope
bundle), for platforms that run one container per submission, or one per cohort shard, and
whose default profile refuses the namespaces bubblewrap needs (Docker's does). The grader runs
as root; its zygote (a fresh interpreter, never running submission code) drops each worker to
`WORKER_UID`, an unprivileged uid, and loads the syscall filter before the submission's first
line. What the worker must not read (the reference, the checks and mistakes, the course
secret) is kept from it by plain file modes, which the image sets up (`chmod -R go-rwx` on
them, as the Gradescope bundle's `setup.sh` does) and which `check_unreadable` proves, as
that uid, before any submission runs. After each worker every process of that uid is killed
and its files in the writable folders are removed (`grader.sandbox.sweep`).

    require_root()                            # IsolationUnavailable as a user
    check_unreadable(["/autograder/source/solutions"], WORKER_UID)
    check_readable(["/usr/lib/python3.11", "/autograder/venv"], WORKER_UID)
"""

from __future__ import annotations

import os

from grader.sandbox.isolation import IsolationUnavailable

WORKER_UID = 65533  # not nobody (65534), which the system's own daemons may use


def require_root() -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise IsolationUnavailable(
            "容器模式要以 root 运行（工作进程要换成另一个无特权用户）",
            "the container tier runs as root (each worker drops to an unprivileged uid)")


def readable_as(paths: list[str], uid: int) -> list[str]:
    """Which of `paths` a process of `uid` can read or list: found by such a process itself
    (a short-lived child that drops to `uid` and tries), not from the modes' arithmetic."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop, try each, say which opened
        os.close(read)
        code = 0
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            found = []
            for path in paths:
                try:
                    if os.path.isdir(path):
                        os.listdir(path)
                    else:
                        os.close(os.open(path, os.O_RDONLY))
                    found.append(path)
                except OSError:
                    pass
            os.write(write, "\n".join(found).encode())
        except BaseException:  # noqa: BLE001 - the parent reads an empty answer as "could not check"
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise IsolationUnavailable(f"无法以 uid {uid} 检查文件权限", f"could not check the file modes as uid {uid}")
    text = b"".join(chunks).decode(errors="replace")
    return [line for line in text.split("\n") if line]


def check_unreadable(paths: list[str], uid: int = WORKER_UID) -> None:
    """IsolationUnavailable, naming the paths and the command that closes them (all of them),
    when a worker of `uid` could read any of `paths` (those that exist)."""
    present = [p for p in paths if os.path.lexists(p)]
    readable = readable_as(present, uid)
    if readable:
        shown = " ".join(readable[:8]) + (" …" if len(readable) > 8 else "")
        command = "chmod -R go-rwx " + " ".join(readable)
        raise IsolationUnavailable(
            f"容器模式下工作进程（uid {uid}）能读到这些文件：{shown}。办法：{command}",
            f"in the container tier the workers (uid {uid}) could read: {shown}. The way out: {command}")


def check_readable(paths: list[str], uid: int = WORKER_UID) -> None:
    """IsolationUnavailable when a worker of `uid` could not read what it needs (Python, the
    kit's worker side, the lesson's data): said with the way out, before anything is graded."""
    present = [p for p in paths if os.path.exists(p)]
    unread = sorted(set(present) - set(readable_as(present, uid)))
    if unread:
        shown = " ".join(unread[:6]) + (" …" if len(unread) > 6 else "")
        raise IsolationUnavailable(
            f"容器模式下工作进程（uid {uid}）读不到它需要的：{shown}。办法：把 Python 与评分工具装在其他用户能读的地方"
            f"（例如 /usr/local），或 chmod o+rx 这些路径及其上层文件夹",
            f"in the container tier the workers (uid {uid}) cannot read what they need: {shown}. The way out: "
            f"install Python and the kit where other users can read them (/usr/local, say), or chmod o+rx "
            f"these paths and the folders above them")


__all__ = ["WORKER_UID", "require_root", "readable_as", "check_unreadable", "check_readable"]
