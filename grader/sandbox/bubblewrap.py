"""The official tier on Linux: the zygote and its workers inside bubblewrap.

The policy is the list of layers below (`layers()`); bubblewrap (`bwrap`, the Debian/Ubuntu
package `bubblewrap`) is the mechanism, and libseccomp builds the syscall filter it loads.
The zygote is the sandbox's PID 1: it never runs submission code, ignores every signal a
worker could send it (the kernel delivers to a namespace's init only the signals it handles),
is not dumpable (no worker can read or write its memory), and after each worker kills every
other process of the sandbox and empties what the worker could write (`grader.sandbox.sweep`).

| layer        | bubblewrap options                                                              |
| ------------ | ------------------------------------------------------------------------------- |
| processes    | `--unshare-pid --as-pid-1 --die-with-parent --new-session`: its own PID space, gone with the judge |
| network      | `--unshare-net`: no device but a loopback of its own                            |
| IPC, host    | `--unshare-ipc --unshare-uts --unshare-cgroup-try`                               |
| user         | as root: `--cap-drop ALL` (the zygote keeps what it needs to drop each worker to an unprivileged uid and to sweep); as a user: `--unshare-user`, no capability |
| files        | a fresh root holding, read-only, the system's libraries, Python and its packages, the lesson's data and the kit's worker side only (`worker_view`): the reference, the checks, the mistakes, the course secret, the cohort and every other folder are simply not there |
| writable     | a size-capped tmpfs on `/tmp` and `/dev/shm`, emptied after each worker          |
| environment  | `--clearenv`: only what Python needs                                             |
| syscalls     | `--seccomp`: the filter of `grader.sandbox.seccomp`                              |

    argv = command(python, socket_fd=3, seccomp_fd=4, info_fd=5, data=["/srv/data"])
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from grader.model.paths import PACKAGE_DIR
import grader.sandbox.seccomp as seccomp
from grader.sandbox.isolation import WAY_OUT, IsolationUnavailable
from grader.sandbox.limits import ONE_THREAD_ENV

TMP_SIZE = 512 * 1024 * 1024  # bytes of /tmp inside the sandbox
SHM_SIZE = 64 * 1024 * 1024   # bytes of /dev/shm
# what of the grader package a worker needs (everything else of it, checks and mistakes, is absent)
WORKER_SIDE = ("__init__.py", "sandbox", "probes", "fixtures", "earlier", "model", "tinygpt.py",
               "pieces/__init__.py", "per_exercise/__init__.py", "per_exercise/*/__init__.py",
               "per_exercise/*/probes.py", "per_exercise/*/fixtures.py")
# the capabilities the zygote keeps as root: drop a worker to its uid, kill what it left, remove its files
ZYGOTE_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN")
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime")
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
       "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", **ONE_THREAD_ENV}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def worker_view(package: Path = PACKAGE_DIR) -> list[Path]:
    """The files and folders of the grader package a worker may read (those that exist)."""
    return [path for name in WORKER_SIDE for path in sorted(package.glob(name))]


def python_roots() -> list[str]:
    """Python's own folders and the folders its packages come from (a venv's, the user's, another
    environment's that a .pth file added)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *(sysconfig.get_paths().get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib"))}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:  # a virtualenv's site module without it
        pass
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site:
        roots.add(user_site)
    # another environment's packages a .pth file put on the path (a venv layered on another one)
    roots.update(p for p in sys.path if os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages"))
    found = sorted(r for r in roots if r and os.path.isdir(r))
    # the outermost of nested ones is enough (a venv's site-packages lies inside the venv)
    return [r for r in found if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in found)]


def _system() -> list[str]:
    argv: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for name in ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return argv


def _parents(paths: list[str]) -> list[str]:
    """The folders above `paths` the sandbox's root must hold, shallowest first. bubblewrap
    makes a missing one readable by its owner alone; the workers' uid must pass through them."""
    found = {str(parent) for path in paths for parent in Path(path).parents if str(parent) != "/"}
    found -= {*SYSTEM, "/tmp", "/dev", "/dev/shm"}  # made as tmpfs and devices, before these
    return sorted(found, key=lambda p: (p.count("/"), p))


def _files(data: list[str], package: Path) -> list[str]:
    roots = python_roots()
    view = [str(path) for path in worker_view(package)]
    # the writable places first: what is bound below (a kit or a venv under /tmp) stays visible
    argv = ["--dev", "/dev", "--proc", "/proc",
            "--perms", "0755", "--size", str(TMP_SIZE), "--tmpfs", "/tmp",
            "--perms", "0755", "--size", str(SHM_SIZE), "--tmpfs", "/dev/shm", *_system()]
    for parent in _parents([*roots, *view, *data]):
        if not any(parent == r or parent.startswith(r.rstrip("/") + "/") for r in roots):
            argv += ["--perms", "0755", "--dir", parent]
    for root in roots:
        argv += ["--ro-bind", root, root]
    inside = [r for r in roots if str(package).startswith(r.rstrip("/") + "/")]
    if inside:  # installed: hide the whole package, then show its worker side alone
        argv += ["--tmpfs", str(package)]
        # the folders inside it that hold what is shown (per_exercise/ex02/ for its probes.py):
        # made passable, as bubblewrap would make them its owner's alone
        for folder in _parents(view):
            if folder.startswith(str(package) + "/"):
                argv += ["--perms", "0755", "--dir", folder]
    for path in view:
        argv += ["--ro-bind", path, path]
    for folder in data:
        argv += ["--ro-bind", folder, folder]
    return argv


def layers(*, as_root: bool, data: list[str], package: Path = PACKAGE_DIR, seccomp_fd: int | None) -> dict:
    """The sandbox's layers, by name, as bubblewrap options (the table in the module docstring)."""
    user = ["--cap-drop", "ALL", *(arg for cap in ZYGOTE_CAPS for arg in ("--cap-add", cap))] if as_root \
        else ["--unshare-user"]
    env = ["--clearenv", *(arg for key, value in ENV.items() for arg in ("--setenv", key, value)),
           "--setenv", "PYTHONPATH", str(package.parent)]
    return {
        "processes": ["--unshare-pid", "--as-pid-1", "--die-with-parent", "--new-session"],
        "network": ["--unshare-net"],
        "IPC, host": ["--unshare-ipc", "--unshare-uts", "--hostname", "grader", "--unshare-cgroup-try"],
        "user": user,
        "files": _files(data, package),
        "environment": env,
        "syscalls": ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else [],
    }


def command(python: str, *, socket_fd: int, info_fd: int, seccomp_fd: int | None, data: list[str],
            as_root: bool, package: Path = PACKAGE_DIR) -> list[str]:
    """The whole command line: bwrap, its layers, then the zygote."""
    argv = [bwrap_path() or "bwrap", "--info-fd", str(info_fd)]
    for options in layers(as_root=as_root, data=data, package=package, seccomp_fd=seccomp_fd).values():
        argv += options
    return argv + ["--chdir", "/tmp", "--", python, "-P", "-m", "grader.sandbox.zygote_main", "--fd", str(socket_fd)]


class Sandbox:
    """A started bubblewrap process and the zygote inside it (its host pid: `zygote_pid`)."""

    def __init__(self, proc: subprocess.Popen, zygote_pid: int, stderr):
        # `stderr`: what bubblewrap says, in a file with no name (nothing is left behind in /tmp
        # however this process ends)
        self.proc, self.zygote_pid, self._stderr = proc, zygote_pid, stderr

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._stderr.close()


def start(socket_fd: int, data: list[str]) -> Sandbox:
    """Start the zygote inside bubblewrap, talking over `socket_fd` (passed in).

    IsolationUnavailable (the way out said) when bwrap is missing or cannot build the sandbox.
    """
    if bwrap_path() is None:
        raise IsolationUnavailable("找不到 bubblewrap（bwrap），无法正式评分。" + WAY_OUT["zh"],
                                   "bubblewrap (bwrap) is not installed: official grading cannot start. " + WAY_OUT["en"])
    if not seccomp.available():
        raise IsolationUnavailable(
            "找不到 libseccomp（pyseccomp 与 libseccomp2），无法建立系统调用过滤。办法：pip install pyseccomp，"
            "apt-get install libseccomp2",
            "libseccomp (pyseccomp and libseccomp2) is not available, so no syscall filter can be built: "
            "pip install pyseccomp, apt-get install libseccomp2")
    as_root = os.geteuid() == 0
    with tempfile.TemporaryFile() as bpf:
        seccomp.build().export_bpf(bpf)
        bpf.seek(0)
        info_read, info_write = os.pipe()
        stderr = tempfile.TemporaryFile(prefix="grade-bwrap-")
        argv = command(sys.executable, socket_fd=socket_fd, info_fd=info_write, seccomp_fd=bpf.fileno(), data=data,
                       as_root=as_root)
        try:
            proc = subprocess.Popen(argv, pass_fds=(socket_fd, info_write, bpf.fileno()), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=stderr, close_fds=True)
        finally:
            os.close(info_write)
        info = _read_all(info_read)
    try:
        zygote_pid = int(json.loads(info)["child-pid"]) if info else None
    except (ValueError, KeyError, TypeError):
        zygote_pid = None
    if zygote_pid is None:
        proc.wait()
        said = _said(stderr)
        stderr.close()
        raise IsolationUnavailable(f"bubblewrap 无法建立沙箱（{said or proc.returncode}）。" + WAY_OUT["zh"],
                                   f"bubblewrap could not build the sandbox ({said or proc.returncode}). " + WAY_OUT["en"])
    return Sandbox(proc, zygote_pid, stderr)


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def bwrap_stderr(sandbox: Sandbox) -> str:
    """What bubblewrap said on its way (shown when the zygote never became ready)."""
    try:
        return _said(sandbox._stderr)
    except (OSError, ValueError):  # closed: the sandbox was killed
        return ""


def _said(stderr) -> str:
    """The end of what bubblewrap wrote to `stderr` (the file it was given)."""
    stderr.seek(0)
    return stderr.read().decode(errors="replace").strip()[-600:]


__all__ = ["Sandbox", "start", "command", "layers", "worker_view", "python_roots", "bwrap_path", "bwrap_stderr"]
