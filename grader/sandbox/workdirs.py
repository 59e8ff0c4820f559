"""Working folders of workers that have no private /tmp, and their removal.

A fenced worker works in `/tmp/work` of its own mount namespace, which goes with it. Where it
cannot have one (as root under Docker's default profile, grader.sandbox.mountless; as a user
without user namespaces; the fence turned off) its folder (its copy of the submission, what it
printed) is made on the machine's file system instead, and must neither outlive the run nor
be seen by the next student a slot's uid grades:

- as root, in one root-owned folder that others may pass through but not list (0711,
  `/run/gpt-grader-work`), named after the worker's leased uid: the sweep of a uid
  (grader.sandbox.uids.sweep_uid, after every student) removes that uid's folders, and so
  does the watchdog that sweeps a killed run's block;
- as a user, in a folder of the run's own (`scratch`), removed when the run closes its zygote.

    >>> workdir = make_workdir(work_root(), 62001)   # as root, in the worker, before the uid drop
    >>> clear([62001])                               # the judge's sweep of that uid
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile

PREFIX = "grade-worker-"
ROOTS = ("/run/gpt-grader-work", "/tmp/gpt-grader-work-root")


def work_root() -> str | None:
    """The root-owned folder for workers' folders (made on first use), or None when no safe one
    can be had (not root, or /run and /tmp not writable)."""
    if os.name != "posix" or os.geteuid() != 0:
        return None
    for folder in ROOTS:
        try:
            os.mkdir(folder, 0o711)
        except FileExistsError:
            pass
        except OSError:
            continue
        if _ours(folder):
            os.chmod(folder, 0o711)  # made under umask 077: others must pass through to their folder
            return folder
    return None


def run_scratch(tagged: bool = True) -> tuple[str, str | None]:
    """(the folder a run's workers make theirs in, the same when the run must remove it at its
    end): as root the shared `work_root()`, swept uid by uid, when the workers tag their folders
    with their uid (`tagged`: Linux's fence); else a folder of the run's own."""
    root = work_root() if tagged else None
    if root is not None:
        return root, None
    own = tempfile.mkdtemp(prefix="grade-workers-")
    return own, own


def make_workdir(scratch: str | None, uid: int | None = None) -> str:
    """A new private working folder in `scratch` (tagged with `uid` as root), or in the system's
    temporary folder when there is no scratch folder to use."""
    usable = scratch and os.path.isdir(scratch) and not os.path.islink(scratch)
    tag = f"{uid}-" if uid is not None else ""
    return tempfile.mkdtemp(prefix=PREFIX + tag, dir=scratch if usable else None)


def clear(uids, root: str | None = None) -> None:
    """Remove the working folders of `uids` (as root; what their processes left). Never raises."""
    root = root or _existing_root()
    if root is None:
        return
    wanted = {str(uid) for uid in uids}
    try:
        names = os.listdir(root)
    except OSError:
        return
    remove_trees([os.path.join(root, name) for name in names
                  if name.startswith(PREFIX) and name[len(PREFIX):].partition("-")[0] in wanted])


def remove_trees(paths: list[str]) -> bool:
    """Remove folders whatever the code left in them, never raising; False when something is
    left. A tree 4,000 folders deep is the student's to make: `rm -rf` (fts, no recursion;
    links removed, never followed) where there is one, else shutil.rmtree, whose recursion
    such a tree exhausts (RecursionError, which ignore_errors does not catch)."""
    paths = [p for p in paths if os.path.lexists(p)]
    if not paths:
        return True
    rm = shutil.which("rm", path="/usr/bin:/bin") if os.name == "posix" else None
    if rm:
        import subprocess

        try:
            subprocess.run([rm, "-rf", "--", *paths], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=120)
        except (OSError, subprocess.SubprocessError):
            pass
    for path in paths:
        try:
            shutil.rmtree(path, ignore_errors=True)
        except Exception:  # noqa: BLE001 - RecursionError on a very deep tree: left, not a crash
            pass
    return not any(os.path.lexists(p) for p in paths)


def _existing_root() -> str | None:
    if os.name != "posix" or os.geteuid() != 0:
        return None
    return next((folder for folder in ROOTS if _ours(folder)), None)


def _ours(folder: str) -> bool:
    """Root's own folder, never a link, writable by no one else: a local user cannot plant one
    in /tmp for us."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022
