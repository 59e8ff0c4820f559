"""The zygote's own side: import what every worker needs once, then fork a worker per request.

`Zygote.start` (grader.sandbox.zygote) forks this process from the `grade` process and runs
`zygote_main` in it; the judge's side of the socket is `Zygote.spawn`. A request is a length
and a JSON setup, with the worker's socket and its dump pipe passed as file descriptors; the
reply is the request's number and the worker's pid.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import select
import signal
import socket
import struct
import time

import grader.sandbox.exits as exits

__all__ = ["zygote_main"]


def zygote_main(sock: socket.socket, huge_pages: bool = False) -> None:
    """Import what every worker needs, then fork a worker per request (see `Zygote`)."""
    status_fds: dict[int, int] = {}  # worker pid -> the pipe its exit status is written to
    signal.signal(signal.SIGCHLD, exits.reaper(status_fds))
    # A worker in a PID namespace of its own runs the student's code in its child (pid 1 there,
    # grader.sandbox.pidns); when the judge kills the group, that child is reparented here, not
    # to the machine's init, and the reaper above reaps it: no zombie is left behind.
    import grader.sandbox.pidns as pidns

    pidns.become_subreaper()
    own_ns = pidns.own_namespace()
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the judge's to handle
    import torch

    torch.set_num_threads(1)  # measured: one thread is never slower at these sizes
    from grader.probes import import_all
    from grader.sandbox.fence import enter
    from grader.sandbox.guard import Guard
    from grader.sandbox.hugepages import Collapser
    from grader.sandbox.worker import forget_exercise_modules, serve

    import_all()
    # Sealed once here, before any worker exists: each worker shares the snapshot (taking its
    # own cost about 30 ms, most of it copying the zygote's pages as it touched them) and only
    # checks, after its fence, that nothing changed (`Guard.resync`). Nothing of the grader's
    # hidden modules is imported here after this: `enter` and `serve` are bound above.
    forgotten = forget_exercise_modules()
    guard = Guard()
    guard.seal()
    guard.check(thorough=True)  # lays out the fast table once, for every worker
    # What is loaded now lives as long as every worker: a worker's garbage collections never
    # walk it, so they neither cost the time nor copy the zygote's pages (copy-on-write).
    # (A gc.collect() first only for exercise modules taken out above, freed rather than kept:
    # after the imports alone it finds nothing, in about 0.15 s.)
    if forgotten:
        gc.collect()
    gc.freeze()
    # Huge pages: each fork then copies about 70 page-table entries for the heap, not 37,000.
    # A few MiB at a time, only while no request waits: the first workers do not wait for it.
    collapser = Collapser() if huge_pages else None
    waiting = select.poll()  # (not select.select: it cannot watch a descriptor above 1023)
    waiting.register(sock, select.POLLIN)

    while True:
        while collapser is not None and collapser.pending() and not waiting.poll(0):
            collapser.step()
        try:
            header, fds, _, _ = socket.recv_fds(sock, 4, 3)
            if len(header) < 4:
                raise EOFError  # the judge has gone
            (n,) = struct.unpack("!I", header)
            setup = json.loads(_recv_exact(sock, n))
        except (OSError, EOFError):
            exits.leave(status_fds)
        # fds: the worker's socket, its dump pipe (the worker's to write), its status pipe (ours
        # alone: the worker closes it first, so no code of the submission's can write a status)
        dump_fd = fds[1] if len(fds) > 1 else None
        status_fd = fds[2] if len(fds) > 2 else None
        # SIGCHLD waits until the new pid is in status_fds (a worker may die at once)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        as_init = (setup.get("fence") or {}).get("enabled", True) and pidns.next_child_as_init(own_ns)
        pid = _fork_patiently()
        if pid is None:  # no process to be had: the judge is told (pid 0), this zygote goes on
            if as_init:
                pidns.restore(own_ns)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            for fd in fds:
                os.close(fd)
            sock.sendall(struct.pack("!QI", int(setup.get("request", 0)) & (2**64 - 1), 0))
            continue
        if pid == 0:
            sock.close()
            for fd in [*status_fds.values(), *([status_fd] if status_fd is not None else [])]:
                os.close(fd)
            os.setpgid(0, 0)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            try:
                serve(socket.socket(fileno=fds[0]), setup, dump_fd=dump_fd, enter=enter, guard=guard)
            finally:
                os._exit(0)
        if as_init:
            pidns.restore(own_ns)
        for fd in fds[:2]:  # the worker's own
            os.close(fd)
        if status_fd is not None:
            status_fds[pid] = status_fd
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        # The request's number with the pid: a judge killed between asking and reading leaves
        # its reply unread, and the next asker (a batch's judges share this zygote) skips it.
        sock.sendall(struct.pack("!QI", int(setup.get("request", 0)) & (2**64 - 1), pid))


def _fork_patiently(patience: float = 30.0) -> int | None:
    """os.fork, tried again while the system has no process (or memory) for it: a student's
    processes may hold the user's last ones for a moment (EAGAIN), until their worker is killed.
    None once `patience` seconds have passed, or on any other error."""
    delay, give_up = 0.01, time.monotonic() + patience
    while True:
        try:
            return os.fork()
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.ENOMEM) or time.monotonic() + delay > give_up:
                return None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data
