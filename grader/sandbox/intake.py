"""Reading a submission: bytes from a folder, never through a link, never more than a cap.

A submission is data. Whoever reads one (the Linux fence, the portable worker on Windows and
macOS, the judge's syntax scan, `grade batch`'s staging) reads it here, by one set of rules:

- only the folders something is read from are walked: the top level (what a worker imports),
  and for `grade batch` the folders its caller names (`descend`: `exercises/`, nbgrader's
  assignment folders). Anything else inside (a `.venv`, `.git`, data) is an `lstat` at most:
  never opened, never walked, never counted against a cap;
- a symbolic link is never followed: the folder itself or any folder on its path (on Windows a
  junction too) refuses the whole submission. A link among the files read (a linked
  `ex01_windows.py`) is refused alone, never opened: `exercises -> /proc/self/cwd/solutions`
  or a link to the kit's `solutions/` never becomes the student's answer, and the student's
  other files are still graded. A link that is not read (`data -> ../datasets`, `exercises ->
  …` beside top-level files) is left alone and recorded. (POSIX: a root-owned link directly
  under a root-owned `/`, macOS's `/var`, is the system's and taken as the folder it names.)
- a FIFO, socket or device among the files read is refused alone too, never opened (a FIFO
  would block the reader); one that is not read is left alone;
- sizes are capped before reading: a file read over `max_file`, or one that would take the
  files read together over `max_total` bytes, is refused alone; a walked folder's entries over
  `max_entries` (listing stops there; the whole walk `WALK_FOLDERS` times that), or a walk
  deeper than `max_depth`, refuses the whole submission with the number.

Two walkers, one set of rules (`grader.sandbox.walkers`): file descriptors where the OS has
`O_NOFOLLOW` and `dir_fd` (Linux, macOS), checked paths elsewhere (Windows). The refusals'
words are `grader.sandbox.refusals`.

`read_submission` returns the top level's `*.py` files (what a worker imports) and those
refused alone; `copy_submission` writes the former into the worker's private copy and returns
the `Refusals` the worker says to the checks. `survey(folder, descend=…, tolerate=…)` walks
without reading, for callers that choose what to read (`grade batch`'s staging).

    read_submission("sub")   # ({'ex01_windows.py': b'X = 1\\n'}, {}); sub/data -> /etc is not read;
    # with sub/ex02_nll.py -> ../solutions/ex02_nll.py, ex02_nll.py is refused alone:
    # ({'ex01_windows.py': b'X = 1\\n'}, {'ex02_nll.py': SubmissionRefused('… is a symbolic link …')})
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.sandbox.refusals import FOLDER, SubmissionRefused, refuse, shown, special
from grader.sandbox.walkers import is_link, same_file, walker

# One set of caps for every reader: a worker's copy (`grade exNN`), `grade batch`'s staging
# (grader.cohort.capped), the judge's scan. The course's largest solution is about 10 KB.
LIMITS = {"max_file": 2 * 1024 * 1024, "max_total": 16 * 1024 * 1024, "max_entries": 4000, "max_depth": 12}
EXERCISE_NAME = re.compile(r"^ex[0-9]{2}_\w*\.py$")  # ASCII digits: `ex٠١_windows.py` is no exercise file


def reading_order(name: str) -> tuple[bool, str]:
    """The order files are counted against `max_total`: exercise files first, then the rest by
    name, so that helpers (`a_data.py`, ...) never crowd an exercise out of the cap.

        >>> sorted(["a_data.py", "ex02_nll.py", "ex01_windows.py"], key=reading_order)
        ['ex01_windows.py', 'ex02_nll.py', 'a_data.py']
    """
    return (EXERCISE_NAME.match(name) is None, name)
WALK_FOLDERS = 4  # a walk lists at most this many folders' worth of entries (max_entries each)


# --------------------------------------------------------------------------- the survey


@dataclass
class Survey:
    """What a submission folder holds, looked at without reading a byte.

    `entries`: every regular file and real folder, by its path inside the folder (a tuple of
    names) -> its `lstat`; `problems`: the refusals `tolerate` let through (each with `parts`).
    """

    folder: str
    entries: dict[tuple[str, ...], os.stat_result] = field(default_factory=dict)
    problems: list[SubmissionRefused] = field(default_factory=list)
    portable: bool | None = None

    def files(self, parent: tuple[str, ...] = ()) -> dict[str, os.stat_result]:
        """The regular files directly in folder `parent` (a path inside the submission)."""
        return {p[-1]: s for p, s in self.entries.items() if p[:-1] == parent and stat.S_ISREG(s.st_mode)}

    def read(self, wanted, cap: int) -> dict[tuple[str, ...], bytes | SubmissionRefused]:
        """Read the files `wanted` (paths from `entries`), each at most `cap`, without following
        a link; each is checked to be the file the survey saw. A file that cannot be read so
        gives its refusal instead of bytes."""
        walk = walker(self.portable)
        out: dict[tuple[str, ...], bytes | SubmissionRefused] = {}
        root = walk.root(self.folder)
        opened = {(): root}
        try:
            for parts in sorted(wanted):
                what = "/".join(shown(p) for p in parts)
                try:
                    handle = self._folder(walk, opened, parts[:-1])
                    data, info = walk.read(handle, parts[-1], what, cap, parts)
                    if parts in self.entries and not same_file(info, self.entries[parts]):
                        raise refuse(what, "changed", parts=parts)
                    out[parts] = data
                except SubmissionRefused as err:
                    out[parts] = err
        finally:
            for handle in opened.values():
                walk.close(handle)
        return out

    def _folder(self, walk, opened: dict, parts: tuple[str, ...]):
        if parts not in opened:
            parent = self._folder(walk, opened, parts[:-1])
            what = "/".join(shown(p) for p in parts)
            info = self.entries.get(parts)
            if info is None or not stat.S_ISDIR(info.st_mode):
                raise refuse(what, "changed", parts=parts)
            opened[parts] = walk.sub(parent, parts[-1], info, what, parts)
        return opened[parts]


Tolerate = Callable[[tuple[str, ...], SubmissionRefused], bool]
Descend = Callable[[tuple[str, ...]], bool]


def survey(folder: str, limits: dict | None = None, *, descend: Descend | None = None,
           tolerate: Tolerate | None = None, portable: bool | None = None) -> Survey:
    """Walk `folder` by the rules above, reading nothing; `SubmissionRefused` for what is unsafe.

    Only the top level is listed, and the sub-folders `descend(parts)` says True for (None:
    none); the others are recorded as folders and never opened. A link or special file for
    which `tolerate(parts, refusal)` says True is recorded in `problems` instead (and not looked
    into). `portable` forces a walker (None: the OS's best).

        survey("sub", descend=lambda parts: parts == ("exercises",)).entries
        # {('exercises',): …, ('exercises', 'ex01_windows.py'): …, ('.venv',): …}  .venv not walked
    """
    caps = {**LIMITS, **(limits or {})}
    walk = walker(portable)
    found = Survey(os.path.abspath(folder), portable=portable)
    root = walk.root(folder)
    try:
        _walk(walk, root, (), caps, {"entries": 0}, descend or _nowhere, tolerate, found)
    finally:
        walk.close(root)
    return found


def _nowhere(_parts: tuple[str, ...]) -> bool:
    return False


def _walk(walk, handle, parts: tuple[str, ...], caps: dict, state: dict, descend: Descend, tolerate,
          found: Survey) -> None:
    here = "/".join(shown(p) for p in parts) or FOLDER  # the submission itself: "the folder", never "."
    if len(parts) > caps["max_depth"]:
        raise refuse(here, "too_deep", parts=parts, zh=f"嵌套太深（超过 {caps['max_depth']} 层）",
                      en=f"is nested too deeply (over {caps['max_depth']} levels)")
    # Each walked folder may hold `max_entries` (as a single run lists one); the whole walk
    # WALK_FOLDERS times that (nbgrader's assignments, `exercises/` beside the top level).
    total = caps["max_entries"] * WALK_FOLDERS
    listed = 0
    for name, info in walk.entries(handle, here, parts, min(caps["max_entries"], total - state["entries"]) + 1):
        rel = parts + (name,)
        what = "/".join(shown(p) for p in rel)
        listed += 1
        state["entries"] += 1
        if listed > caps["max_entries"] or state["entries"] > total:
            cap = caps["max_entries"] if listed > caps["max_entries"] else total
            raise refuse(here, "too_many", parts=rel, zh=f"文件太多（超过 {cap} 个）",
                          en=f"holds too many entries (over {cap})")
        if is_link(info):
            problem = refuse(what, "link", parts=rel)
        elif stat.S_ISDIR(info.st_mode):
            found.entries[rel] = info
            if descend(rel):
                try:
                    sub = walk.sub(handle, name, info, what, rel)
                except SubmissionRefused as err:  # a sub-folder that cannot be opened (mode 000)
                    if err.reason != "unreadable" or tolerate is None or not tolerate(rel, err):
                        raise
                    found.problems.append(err)  # noted; what lies beside it is still read
                    continue
                try:
                    _walk(walk, sub, rel, caps, state, descend, tolerate, found)
                finally:
                    walk.close(sub)
            continue
        elif not stat.S_ISREG(info.st_mode):
            problem = special(what, info.st_mode, rel)
        else:
            found.entries[rel] = info
            continue
        if tolerate is None or not tolerate(rel, problem):
            raise problem
        found.problems.append(problem)


# --------------------------------------------------------------------------- what workers import


@dataclass(frozen=True)
class Refusals:
    """What of a submission was not read, and why, in intake's words (the worker says it).

    `whole`: the submission itself was refused (its folder is a link, too many entries, …), and
    every check says so; `files`: a top-level `*.py` refused alone (a link, a FIFO, over a cap),
    by name: only the checks of that file's exercise say so, the other exercises are graded.

        Refusals(files={"ex02_nll.py": "未读取：…/ not read: ex02_nll.py is a symbolic link …"}).of("ex02_nll")
    """

    whole: str | None = None
    files: dict[str, str] = field(default_factory=dict)

    def of(self, module: str) -> str | None:
        """Why module `module` cannot be imported from the copy (None: it can, or it is absent)."""
        return self.whole or self.files.get(f"{module}.py")


def read_submission(folder: str, limits: dict | None = None, *,
                    portable: bool | None = None) -> tuple[dict[str, bytes], dict[str, SubmissionRefused]]:
    """The submission's top-level `*.py` files as bytes, and those refused alone, by name.

    `SubmissionRefused` for what refuses the whole submission (the folder is a link, or sits
    behind one, too many entries). A top-level `*.py` that is a link or a special file, one over
    `max_file`, or one that would take the files read together over `max_total` (checked before
    a byte is read, exercise files first: `reading_order`) is refused alone, as `grade batch` refuses it: the other
    files are still read. Other links and special files are not read, and sub-folders not walked.

        files, refused = read_submission("sub")   # sub/ex02_nll.py -> ../solutions/ex02_nll.py:
        # files == {"ex01_windows.py": b"..."}, refused["ex02_nll.py"].reason == "link"
    """
    caps = {**LIMITS, **(limits or {})}
    found = survey(folder, caps, tolerate=_alone, portable=portable)
    refused: dict[str, SubmissionRefused] = {err.parts[0]: err for err in found.problems if len(err.parts) == 1
                                             and err.parts[0].endswith(".py")}
    wanted, total = [], 0
    for name, info in sorted(found.files().items(), key=lambda item: reading_order(item[0])):
        if not name.endswith(".py"):
            continue
        if info.st_size > caps["max_file"]:
            refused[name] = refuse(shown(name), "too_large", info.st_size, caps["max_file"], parts=(name,))
        elif total + info.st_size > caps["max_total"]:
            refused[name] = refuse(shown(name), "over_total", parts=(name,),
                                   zh=f"让提交的文件合计超过上限（{caps['max_total']} 字节）",
                                   en=f"takes the submission's files together over the cap ({caps['max_total']} bytes)")
        else:
            wanted.append((name,))
            total += info.st_size
    files = {}
    for parts, data in found.read(wanted, caps["max_file"]).items():
        if isinstance(data, SubmissionRefused):
            refused[parts[0]] = data
        else:
            files[parts[0]] = data
    return files, refused


def _alone(_parts: tuple[str, ...], _err: SubmissionRefused) -> bool:
    """A link or special file among the files: recorded, never read (a `*.py` one is refused alone)."""
    return True


def copy_submission(folder: str, target: str, limits: dict | None = None, *,
                    portable: bool | None = None) -> Refusals:
    """The submission's files read by these rules and written into a new folder `target` (the
    worker's private copy, the only one it imports); what was not read, and why.

    A refused submission leaves `target` empty; a file refused alone is left out of it. The
    copies are read-only where that does not stop their clean-up (POSIX; on Windows a read-only
    file would outlive the scratch folder).
    """
    files, refusals = read_into_refusals(folder, limits, portable=portable)
    os.mkdir(target, 0o755)
    for name, data in files.items():
        path = os.path.join(target, name)
        with open(path, "wb") as handle:
            handle.write(data)
        if os.name == "posix":
            os.chmod(path, 0o444)
    return refusals


def read_into_refusals(folder: str, limits: dict | None = None, *,
                       portable: bool | None = None) -> tuple[dict[str, bytes], Refusals]:
    """`read_submission`, its refusals as the worker says them: (files, `Refusals`)."""
    try:
        files, refused = read_submission(folder, limits, portable=portable)
    except SubmissionRefused as err:
        return {}, Refusals(whole=err.message)
    return files, Refusals(files={name: err.alone for name, err in refused.items()})


__all__ = ["read_submission", "read_into_refusals", "copy_submission", "Refusals", "survey", "Survey",
           "SubmissionRefused", "LIMITS",
           "is_link", "shown"]
