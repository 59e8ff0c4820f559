"""The worker as pid 1 of a PID namespace of its own: it can signal no process outside.

`grader.sandbox.fence` unshares a new PID namespace with the others (as root; as a user,
inside the user namespace, where the kernel allows unprivileged user namespaces) and calls
`become_init`. Where neither holds (user namespaces disabled), the worker runs as the
student's own uid in the grader's PID namespace and can signal the grader's processes.
"""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWPID = 0x20000000


def own_namespace() -> int | None:
    """As root: a descriptor of this process's PID namespace, for `next_child_as_init`; else None."""
    if os.geteuid() != 0:
        return None
    try:
        return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def next_child_as_init(own: int | None) -> bool:
    """The zygote's side (as root): the next child forked is pid 1 of a new PID namespace, so
    the worker need not fork again (`become_init`, about 12 ms for a process holding torch).
    Call `restore(own)` in the parent right after the fork. False when it cannot be done."""
    if own is None:
        return False
    return ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWPID) == 0


def restore(own: int) -> None:
    """Children forked from now on are in `own` again (each worker has a namespace of its own:
    none may land in the last one's). The zygote cannot go on without it."""
    if ctypes.CDLL(None, use_errno=True).setns(own, CLONE_NEWPID) != 0:
        os.write(2, b"grade: the zygote could not return to its PID namespace\n")
        os._exit(70)


def become_subreaper() -> None:
    """Orphans below this process (a worker's pid-1 child whose parent was killed first) are
    reparented to it instead of the machine's init (which may reap them late, or never)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def as_init(report: dict, mount_proc=None) -> None:
    """This worker already is pid 1 of its namespace (`next_child_as_init`): mount its /proc."""
    report["pid_namespace"] = True
    if mount_proc is not None:
        try:
            mount_proc()
            report["proc"] = "private"
        except OSError as err:
            report.setdefault("errors", []).append(f"mount /proc: {err}")


def become_init(report: dict, keep: set[int], mount_proc=None, on_parent=None) -> None:
    """Fork into the new PID namespace: the child, its pid 1, goes on as the worker.

    After unshare(CLONE_NEWPID) this process stays where it was; its first child is pid 1 of
    the new namespace. The student's code runs in that child, which sees no process outside
    the namespace and so can signal none of them (the judge, the zygote, another worker):
    `kill(pid)` names a process of its own namespace only. When it ends, the kernel kills
    everything left in the namespace. This process holds nothing of the judge's (it closes the
    socket, so the judge sees the child's end), waits, forwards SIGUSR1 (the judge's request
    for a stack dump) and ends as the child ended. The judge's killpg reaches both: the child
    keeps this process's group.
    """
    pid = os.fork()
    if pid == 0:
        as_init(report, mount_proc)
        return
    for fd in keep:
        try:
            os.close(fd)
        except OSError:
            pass
    if on_parent is not None:
        on_parent()  # PR_SET_PDEATHSIG: this process dies with the zygote, the child with this one
    signal.signal(signal.SIGUSR1, lambda *_: os.kill(pid, signal.SIGUSR1))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):  # ended the same way, so the zygote's report (a kill -9 from outside
        signal_number = os.WTERMSIG(status)  # gets the call once more: zygote.Worker.run) is the child's
        try:
            signal.signal(signal_number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL's handler cannot be set: it is always the default
        os.kill(os.getpid(), signal_number)
        os._exit(128 + signal_number)  # a signal whose default is not to end the process
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
