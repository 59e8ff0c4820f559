"""The batch's own children (judges, the warm-up's): forked with Ctrl-C held off, dying with it.

    pid = fork_holding_ctrl_c()
    if pid == 0:  # the child: its own handler first, then Ctrl-C let in
        signal.signal(signal.SIGINT, signal.SIG_IGN); release_ctrl_c(); die_with_parent(parent)
"""

from __future__ import annotations

import os
import signal

PR_SET_PDEATHSIG = 1


def fork_holding_ctrl_c() -> int:
    """os.fork() with Ctrl-C held off while it runs. Python runs its after-fork hooks (logging's
    lock) inside os.fork, and a KeyboardInterrupt raised there is printed and dropped: the batch
    went on to the end. Held, it arrives as the fork returns, in the caller's code. The child
    starts with it still held: it sets its own handler, then calls `release_ctrl_c()`."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    pid = os.fork()
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return pid


def release_ctrl_c() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def die_with_parent(parent: int) -> None:
    """This process gets SIGKILL when `parent` dies (and dies now if it already has)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(3)
