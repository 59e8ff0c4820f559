"""The zygote's own side: import what every worker needs once, then fork a worker per request.

The zygote never runs submission code. It starts in one of two ways:

- forked from the `grade` process (the practice tier, `Zygote.start`): `zygote_main(sock, config)`;
- as a fresh interpreter (`python -m grader.sandbox.zygote_main --fd N`): inside bubblewrap,
  or as root in the container tier. Its config is the judge's first frame on the socket.

Then it checks, before any worker exists, that what it must not see it cannot (`self_check`;
the official tiers), and says so in its first answer. Each request is either

- `{"fork": {...}}` with the worker's socket, dump pipe and status pipe as passed fds: a worker
  is forked, enters its limits and uid (`enter_worker`), and serves; the reply is its pid;
- `{"sweep": pid}`: the worker is done with; every process it left is killed and what it wrote
  is removed (`grader.sandbox.sweep`), then the reply.

Replies are `(request number, value)`, as plain data (`plaincodec`).
"""

from __future__ import annotations

import errno
import gc
import os
import signal
import socket
import struct
import sys
import time

import grader.sandbox.exits as exits
import grader.sandbox.plaincodec as plaincodec
from grader.sandbox.framing import recv_frame, send_frame

__all__ = ["zygote_main", "self_check", "enter_worker"]

PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    """prctl(2) through libc (Linux); False where there is none."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def self_check(unseen: list[str], tier: str) -> dict:
    """What this process can see of what no worker may: the paths among `unseen` it can reach,
    the network devices beside loopback, whether it is its PID namespace's init. Run before any
    worker exists, by a process that never runs submission code."""
    found: dict = {"visible": [p for p in unseen if os.path.lexists(p)]}
    if tier == "bubblewrap":
        try:
            with open("/proc/net/dev") as handle:
                devices = [line.split(":")[0].strip() for line in handle.readlines()[2:]]
        except OSError:
            devices = ["?"]
        found["network"] = [d for d in devices if d != "lo"]
        found["pid"] = os.getpid()
    return found


def enter_worker(config: dict, keep_fds: set[int], workdir: str | None, syscalls=None) -> None:
    """A freshly forked worker, before anything else runs in it: its own process group, its
    limits, and in the official tiers its unprivileged uid (as root) and syscall filter
    (`syscalls`: the container tier's, built by the zygote; bubblewrap loads its own)."""
    from grader.sandbox.limits import apply_limits

    os.setpgid(0, 0)
    _close_fds(keep_fds)
    official = config.get("tier") in ("bubblewrap", "container")
    apply_limits(config.get("limits") or {}, processes=official)
    if not official and config.get("tier") == "practice":
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the zygote killed: its workers go too
    uid = config.get("uid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    if syscalls is not None:
        syscalls.load()
    if workdir:
        os.chdir(workdir)


def _close_fds(keep: set[int]) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    if devnull != 0:
        os.dup2(devnull, 0)
    keep = keep | {0, 1, 2}
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 256))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _make_workdir(n: int, uid: int | None) -> str:
    """A fresh folder for worker `n`, its uid's: a name of its own (in the container tier /tmp
    is the machine's, where another slot's zygote, or another run's, makes its workers' too)."""
    import tempfile

    path = tempfile.mkdtemp(prefix=f"w{n}-", dir="/tmp")
    if uid is not None and os.geteuid() == 0:
        os.chown(path, uid, uid)
    return path


def zygote_main(sock: socket.socket, config: dict) -> None:
    """Import what every worker needs, check the fence (official tiers), then serve requests."""
    status_fds: dict[int, int] = {}  # worker pid -> the pipe its exit status is written to
    reap = exits.reaper(status_fds)
    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the judge's to handle
    tier = config.get("tier", "practice")
    if tier != "practice":
        _prctl(PR_SET_DUMPABLE, 0)  # no worker may read or write this process's memory
    # what a worker's processes leave when their parent ends comes here, not to the machine's
    # init: reaped, its CPU time counted with the student's (grader.sandbox.clock)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    from grader.sandbox.preload import load_worker_side
    from grader.sandbox.worker import forget_exercise_modules

    load_worker_side()
    if forget_exercise_modules():
        gc.collect()
    # What is loaded now lives as long as every worker: their garbage collections never walk it.
    gc.freeze()
    ready = {"ready": os.getpid(), **(self_check(config.get("unseen") or [], tier) if tier != "practice" else {})}
    import grader.sandbox.sweep as sweep

    config["keep"] = sweep.entries(("/tmp", "/dev/shm")) if tier == "bubblewrap" else frozenset()
    syscalls = None
    if tier == "container":  # built here, as root: a worker imports nothing once it has dropped to its uid
        import grader.sandbox.seccomp as seccomp

        syscalls = seccomp.build()
    send_frame(sock, plaincodec.encode(ready))
    forked = 0
    while True:
        try:
            header, fds, _, _ = socket.recv_fds(sock, 4, 3)
            if len(header) < 4:
                raise EOFError  # the judge has gone
            (n,) = struct.unpack("!I", header)
            request = plaincodec.decode(_recv_exact(sock, n))
        except (OSError, EOFError, plaincodec.DecodeError):
            exits.leave(status_fds)
        number = request.get("request", 0)
        if "sweep" in request:
            for fd in fds:
                os.close(fd)
            _sweep(tier, config, reap)
            sock.sendall(_reply(number, "swept"))
            continue
        forked += 1
        pid = _fork_worker(sock, fds, config, forked, status_fds, syscalls)
        sock.sendall(_reply(number, pid or 0))


def _reply(number: int, value) -> bytes:
    blob = plaincodec.encode({"request": number, "value": value})
    return struct.pack("!I", len(blob)) + blob


def _sweep(tier: str, config: dict, reap) -> None:
    import grader.sandbox.sweep as sweep

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    try:
        if tier == "bubblewrap":
            sweep.kill_everything_else(reap=lambda: reap(None, None))
            sweep.empty(("/tmp", "/dev/shm"), keep=config["keep"])
        elif tier == "container":
            sweep.kill_uid(config["uid"], reap=lambda: reap(None, None))
            sweep.remove_owned(config["uid"])
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})


def _fork_worker(sock, fds: list[int], config: dict, n: int, status_fds: dict[int, int], syscalls=None) -> int | None:
    """Fork one worker; its pid, or None when the system has no process for it."""
    channel_fd = fds[0]
    dump_fd = fds[1] if len(fds) > 1 else None
    status_fd = fds[2] if len(fds) > 2 else None
    official = config.get("tier") in ("bubblewrap", "container")
    workdir = _make_workdir(n, config.get("uid")) if official else None
    # SIGCHLD waits until the new pid is in status_fds (a worker may die at once)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    pid = _fork_patiently()
    if pid == 0:
        sock.close()
        for fd in [*status_fds.values(), *([status_fd] if status_fd is not None else [])]:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        code = 0
        try:
            enter_worker(config, {channel_fd, *([dump_fd] if dump_fd is not None else [])}, workdir, syscalls)
            from grader.sandbox.worker import serve

            serve(socket.socket(fileno=channel_fd), dump_fd=dump_fd)
        except BaseException:  # noqa: BLE001 - the judge sees the channel close
            code = 1
        finally:
            os._exit(code)
    for fd in fds[:2]:  # the worker's own
        os.close(fd)
    if pid is None:
        if status_fd is not None:
            os.close(status_fd)
    elif status_fd is not None:
        status_fds[pid] = status_fd
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    return pid


def _fork_patiently(patience: float = 30.0) -> int | None:
    """os.fork, tried again while the system has no process (or memory) for it. None once
    `patience` seconds have passed, or on any other error."""
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


def main(argv: list[str] | None = None) -> None:
    """A zygote started as a fresh interpreter: `--fd N` is its socket to the judge, whose first
    frame is the config."""
    argv = sys.argv[1:] if argv is None else argv
    fd = int(argv[argv.index("--fd") + 1])
    if os.getpid() != 1:  # not a sandbox's init: it goes when the judge that started it goes
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    sock = socket.socket(fileno=fd)
    try:
        config = plaincodec.decode(recv_frame(sock))
    except (EOFError, OSError, plaincodec.DecodeError):
        os._exit(1)
    try:
        zygote_main(sock, config)
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
