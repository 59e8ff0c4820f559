"""The fence around a worker: what student code may touch, applied before it is loaded.

`enter(setup, keep_fds)` runs in a freshly forked worker (single-threaded, torch already imported
by the zygote) and returns the folder to import the submission from. What holds depends on the
platform; `enter` applies every layer it can and reports which held (the README's table sums up):

| layer                         | as root (official grading)              | as a user                              |
| ----------------------------- | --------------------------------------- | -------------------------------------- |
| file descriptors              | all closed but the judge's socket; stdin is /dev/null (both)                     |
| memory                        | RLIMIT_AS (`limits["memory"]`, address space, torch included) (both)              |
| CPU, file size, core dumps    | RLIMIT_CPU, RLIMIT_FSIZE (16 MB a file), RLIMIT_CORE = 0 (both); as root, one CPU share and memory cap per uid (a cgroup, `slotgroups`: a slot's processes never starve another's, nor run the machine out of memory) |
| network                       | new empty network namespace             | user+network namespace if the kernel allows unprivileged user namespaces, else none |
| file system                   | new mount namespace: everything read-only (mount_setattr, recursive), a fresh size-capped tmpfs on /tmp, /var/tmp, /dev/shm; solutions/, grader/checks/, grader/mistakes/, tests/, .git and the caller's `hide` list covered by empty read-only tmpfs. Where mount namespaces are refused (Docker's default profile) those are closed to others by the judge (`mountless`) and the worker checks, as its uid, that it can read none of them; its folder is made under `workdirs.work_root()` | the same inside the user namespace when it is available |
| the submission                | copied (its *.py files) into the worker's private /tmp, read-only to the student; the original folder is hidden when the caller lists it | the same when the mount namespace is available |
| user                          | setgroups([]), setgid/setuid to a dedicated unprivileged uid (`uid`, default 65534); NO_NEW_PRIVS | capabilities of the user namespace dropped; same uid as the grader |
| keyrings                      | a new session keyring per worker; the leased uid's user, user-session and persistent keyrings cleared (`keyrings`) | a new session keyring (the user namespace's own user keyrings) |
| processes                     | RLIMIT_NPROC (`nproc`) counted for that uid (as a user: in the worker's own user namespace, Linux 5.14+); the worker is a process-group leader the judge kills with killpg; `sweep_uid` kills every process left with that uid (daemons that escaped with setsid) | killpg only (RLIMIT_NPROC would count every process of the user) |
| parent death, memory running out | PR_SET_PDEATHSIG(SIGKILL): the worker dies with the zygote; oom_score_adj 1000: the OOM killer's first choice (both) |

Nothing here is secret from the student: the fence holds because of what the kernel
enforces, not because the student cannot read this file.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import stat
import sys
from pathlib import Path
from grader.model.files import readable_by_others
from grader.model.paths import PACKAGE_DIR
import grader.sandbox.intake as intake
from grader.sandbox.hidden import kit_secrets
from grader.sandbox.exits import FenceBreached
import grader.sandbox.keyrings as keyrings
import grader.sandbox.mountless as mountless
import grader.sandbox.pidns as pidns
import grader.sandbox.slotgroups as slotgroups
import grader.sandbox.workdirs as workdirs
from grader.sandbox.limits import FILE_SIZE_CAP, nproc_counts_per_user_namespace, prefer_for_oom_killer

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442  # x86_64 and aarch64 (unified syscall table since 5.x)
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4

DEFAULTS = {
    "enabled": True,
    "uid": 65534,
    "gid": 65534,
    "nproc": 64,             # processes + threads of the worker's uid (root mode only)
    "tmp_size": "512m",      # the private /tmp
    "hide": [],              # extra paths to cover (batch: the cohort folder, the output folder)
    "grants": [],            # files the student's probes must read (the corpus)
    "max_copy": intake.LIMITS["max_total"],  # bytes of submission copied
}


# What of the submission was not read, and why (grader.sandbox.intake.Refusals); set by `enter`,
# read by the worker before anything of the student's runs.
REFUSED: intake.Refusals | None = None


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _call(name: str, *args) -> None:
    libc = _libc()
    if getattr(libc, name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _call("mount", source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
          data.encode() if data else None)


def _all_readonly() -> None:
    """Make every mount in this namespace read-only (one syscall, Linux 5.12+)."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    libc = _libc()
    if libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount_setattr: {os.strerror(err)}")


def _close_fds(keep: set[int]) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    if devnull != 0:
        os.dup2(devnull, 0)
    keep = keep | {0, 1, 2}
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _read_submission(folder: str | None, cap: int) -> tuple[dict[str, bytes], intake.Refusals]:
    """The submission's top-level *.py files (what the worker imports), read before hiding, and
    what was not read: by `grader.sandbox.intake` (as root), no link followed, no linked or
    special `*.py` (refused alone), sizes capped before reading."""
    if not folder:
        return {}, intake.Refusals()
    return intake.read_into_refusals(folder, {"max_total": cap})


def _write_copy(target: str, files: dict[str, bytes]) -> None:
    """The submission's files, read-only, in a folder of their own (the only copy the worker imports)."""
    os.mkdir(target, 0o755)
    for name, data in files.items():
        path = os.path.join(target, name)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, 0o444)
    os.chmod(target, 0o555)


def python_paths() -> list[str]:
    """Folders the worker imports from: the interpreter's library, the venv, the grader package."""
    import site

    # The grader package, not the kit's root: solutions/ beside it must stay out of reach.
    paths = {sys.base_prefix, sys.prefix, sys.exec_prefix, str(PACKAGE_DIR)}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    # Site folders a .pth file put on the path (another environment's torch, say).
    paths.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p))
    return sorted(paths)


def _open_paths(paths) -> dict[str, int]:
    fds = {}
    for path in paths:
        try:
            fds[str(path)] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            pass
    return fds


def _expose(path: str, fd: int, covered: set[str]) -> bool:
    """Make `path` (opened as `fd` before the mounts) reachable by any user, at the same place.

    The first folder on the way that others cannot enter is covered by an empty tmpfs (its
    other contents stay invisible), the way down is recreated in it, and `path` itself is
    bind-mounted there from `fd`. `path` keeps its own permissions.
    """
    parts = Path(path).parts
    current = Path(parts[0])
    blocked = None
    for part in parts[1:]:
        current = current / part
        if not current.exists():
            break
        if current != Path(path) and not os.stat(current).st_mode & stat.S_IXOTH:
            blocked = current
            break
    if blocked is not None and str(blocked) not in covered:
        _mount("tmpfs", str(blocked), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
        covered.add(str(blocked))
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.mkdir(path, 0o755)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
    return readable_by_others(path)


def _hide(paths: list[str], report: dict) -> None:
    hidden = []
    for path in paths:
        if not os.path.lexists(path):
            continue
        try:
            if os.path.isdir(path):
                _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=555")
            else:
                _mount("/dev/null", path, None, MS_BIND)
            hidden.append(path)
        except OSError as err:
            report.setdefault("errors", []).append(f"hide {path}: {err}")
    report["hidden"] = hidden


def _unshare(flags: int, report: dict) -> None:
    """unshare(flags), with a new PID namespace too where the kernel allows it (unless the
    zygote forked this worker as pid 1 of one already, grader.sandbox.pidns.next_child_as_init)."""
    if os.getpid() == 1:
        _call("unshare", flags)
        report["pid_namespace"] = "init"
        return
    try:
        _call("unshare", flags | CLONE_NEWPID)
        report["pid_namespace"] = "pending"  # the next child is its pid 1 (grader.sandbox.pidns)
    except OSError:
        _call("unshare", flags)
        report["pid_namespace"] = False


def _become_init(report: dict, keep: set[int], mount_proc: bool) -> None:
    pidns.become_init(report, keep, mount_proc=_mount_proc if mount_proc else None, on_parent=_pdeathsig)


def _mount_proc() -> None:
    """/proc of this PID namespace: /proc/<pid> of the judge is not there to read."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _user_namespace(report: dict) -> bool:
    """As a user: a user namespace where we may build the same mount and network fences."""
    uid, gid = os.getuid(), os.getgid()
    try:
        _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS, report)
    except OSError as err:
        try:
            _call("unshare", CLONE_NEWUSER | CLONE_NEWNET)
            report["network"] = "user+network namespace"
        except OSError:
            report["network"] = f"not isolated ({err.strerror})"
        return False
    try:
        with open("/proc/self/setgroups", "w") as handle:
            handle.write("deny")
        with open("/proc/self/uid_map", "w") as handle:
            handle.write(f"0 {uid} 1")
        with open("/proc/self/gid_map", "w") as handle:
            handle.write(f"0 {gid} 1")
    except OSError as err:
        report.setdefault("errors", []).append(f"id maps: {err}")
    report["network"] = "user+network namespace"
    return True


def _drop_capabilities() -> None:
    """Drop every capability this process holds (inside a user namespace)."""
    libc = _libc()
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _limits(limits: dict, fence: dict, cap_processes: bool, report: dict) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-long write fails instead of killing
    wanted = [("RLIMIT_FSIZE", FILE_SIZE_CAP), ("RLIMIT_AS", limits.get("memory")),
              ("RLIMIT_CPU", limits.get("cpu")), ("RLIMIT_CORE", 0),
              # no POSIX message queue: one outlives the worker in a shared IPC namespace, and
              # where /dev/mqueue is not mounted no sweep could find it (System V IPC is swept)
              ("RLIMIT_MSGQUEUE", 0)]
    if cap_processes:
        wanted.append(("RLIMIT_NPROC", fence.get("nproc")))
    held = {}
    for name, value in wanted:
        if value is None or not hasattr(resource, name):
            continue
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
            held[name] = value
        except (ValueError, OSError):
            pass
    report["rlimits"] = held


def _pdeathsig() -> None:
    try:
        _call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def enter(setup: dict, keep_fds: set[int] | None = None) -> tuple[str | None, str]:
    """Fence this (worker) process; returns (folder to import the submission from, working folder).

    Call it in the forked worker, before anything of the student's is loaded.
    """
    fence = {**DEFAULTS, **(setup.get("fence") or {})}
    limits = setup.get("limits") or {}
    folder = setup.get("submission")
    report: dict[str, object] = {"root": os.geteuid() == 0, "enabled": bool(fence["enabled"])}
    _close_fds(set(keep_fds or ()))
    report["oom_score_adj"], report["slot_group"] = prefer_for_oom_killer(), slotgroups.join(fence.get("uid"), limits.get("memory"), fence.get("slot_memory"))  # as root
    global REFUSED
    files, REFUSED = _read_submission(folder, fence["max_copy"])
    if not fence["enabled"]:
        _limits(limits, fence, False, report)
        workdir = workdirs.make_workdir(fence.get("scratch"), int(fence["uid"]) if os.geteuid() == 0 else None)
        copy = None
        if folder is not None:
            copy = os.path.join(workdir, "submission")
            _write_copy(copy, files)
        return copy, workdir
    privileged = os.geteuid() == 0
    namespaced = False
    if privileged:
        try:
            _unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS, report)
            namespaced = True
            report["network"] = "network namespace (no interfaces)"
        except OSError as err:
            report["network"] = f"not isolated ({err.strerror})"
    else:
        namespaced = _user_namespace(report)
    if report.get("pid_namespace") == "pending":
        _become_init(report, set(keep_fds or ()), mount_proc=namespaced)
    elif report.get("pid_namespace") == "init" and namespaced:
        pidns.as_init(report, _mount_proc)
    new_folder, workdir = folder, None
    if namespaced:
        try:
            _mount("none", "/", None, MS_REC | MS_PRIVATE)
            needs = _open_paths(python_paths() + [str(p) for p in fence["grants"]])  # in this namespace
            try:
                _all_readonly()
                report["read_only_root"] = True
            except OSError as err:
                report["read_only_root"] = False
                report.setdefault("errors", []).append(str(err))
            for tmp in ("/tmp", "/var/tmp", "/dev/shm"):
                if os.path.isdir(tmp):
                    size = fence["tmp_size"] if tmp == "/tmp" else "16m"
                    _mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
            exposed, covered = [], set()
            secrets = kit_secrets() + [str(p) for p in fence["hide"]]
            for path, fd in needs.items():
                if any(path == h or path.startswith(h + os.sep) for h in secrets):
                    continue
                if (privileged and not readable_by_others(path)) or not os.path.exists(path):
                    try:
                        if _expose(path, fd, covered):
                            exposed.append(path)
                    except OSError as err:
                        report.setdefault("errors", []).append(f"expose {path}: {err}")
            report["exposed"] = exposed
            for fd in needs.values():  # an fd opened before the hiding would see past it
                os.close(fd)
            # Last, so that nothing exposed above (a kit under /tmp, say) uncovers a secret.
            _hide(secrets, report)
            if folder is not None:
                new_folder = "/tmp/submission"
                _write_copy(new_folder, files)
            workdir = "/tmp/work"
            os.mkdir(workdir, 0o700)
            report["mounts"] = True
        except OSError as err:
            report["mounts"] = f"failed: {err}"
    if workdir is None:  # on the machine's file system: removed by the sweep of its uid, or with the run
        workdir = workdirs.make_workdir(fence.get("scratch"), int(fence["uid"]) if privileged else None)
        if folder is not None:  # no mount namespace: still a private copy, never the original
            new_folder = os.path.join(workdir, "submission")
            _write_copy(new_folder, files)
    dropped = False
    if privileged:
        uid, gid = int(fence["uid"]), int(fence["gid"])
        if uid <= 0 or gid <= 0:
            uid = gid = 65534
        try:
            os.chown(workdir, uid, gid)
            _limits(limits, fence, True, report)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            dropped = True
            report["user"] = f"uid {uid}"
        except OSError as err:
            report["user"] = f"still root ({err})"
        if report.get("mounts") is not True:  # nothing covered: closed to others by the judge (grader.sandbox.mountless)
            still_open = mountless.readable_here(list(dict.fromkeys(kit_secrets() + [str(p) for p in fence["hide"]]))) \
                if dropped else ["(root)"]
            if still_open:  # no student code runs where it could read them
                raise FenceBreached(f"{', '.join(still_open)}")
    if not dropped:  # the process cap too, in a user namespace of its own that counts them apart
        _limits(limits, fence, namespaced and not privileged and nproc_counts_per_user_namespace(), report)
        if namespaced and not privileged:
            try:
                _drop_capabilities()
                report["user"] = "same user, capabilities dropped"
            except OSError as err:
                report["user"] = f"same user ({err})"
        elif not privileged:
            report["user"] = "same user"
    report["keyrings"] = keyrings.start_fresh(clear_user=dropped)  # (a leased uid's, never the user's own)
    try:
        _call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        # No process of the same uid may ptrace this one or open its /proc/<pid>/mem: a program
        # the code starts runs without the guard's audit hook (as root the uid drop did this already)
        _call("prctl", PR_SET_DUMPABLE, 0, 0, 0, 0)
    except OSError:
        pass
    _pdeathsig()
    report["submission"] = new_folder
    return new_folder, workdir


__all__ = ["enter", "python_paths", "DEFAULTS"]
