"""The students of a cohort: one per folder, found without trusting a single file in it.

DIR holds one folder per student with their `exNN_*.py` files (or an `exercises/` folder
inside it), or is an nbgrader `submitted/` folder (`<student>/<assignment>/*.ipynb`).
Every folder of DIR is a student, dot-folders included, and gets exactly one row:

- Each folder is keyed by an injective encoding of its exact name (`student_key`): percent
  escapes plus a hash of the name's bytes, so `alice smith` and `alice_smith` (or `Alice`
  and `alice` on a case-blind disk) never share a state file.
- A file is looked at with `lstat` before anything opens it. A link, a FIFO, a device, a
  socket, a folder named like a file or a file over `SOURCE_CAP` is refused *without being
  opened* (a FIFO would block the reader forever) and named in the student's problems; the
  other files are still graded. Accepted files are copied (streamed, capped) into
  OUT/staged/<key>/, the folder the workers then read; the fingerprint of the submission is
  taken while copying, so no file is read twice and none whole into memory.
- nbgrader notebooks are capped the same way before they are parsed; their solution cells
  are extracted into OUT/staged/<key>/.

    >>> students = find_students(Path("cohort"), course, Path("out/staged"))
    >>> students[0].name, students[0].present, students[0].problems
    ('alice smith', {'ex01', 'ex02'}, [{'file': 'ex03_param_budget.py', 'reason': 'special', …}])
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from grader.cohort.capped import NOTEBOOK_CAP, SOURCE_CAP, TOTAL_CAP, read_capped
from grader.cohort.notebooks import extract_notebook_text
from grader.model.course import Course
from grader.model.files import atomic_write

EXERCISE_FILE = re.compile(r"^(ex\d\d)_\w*\.py$")
REASONS = {
    "link": ("是符号链接，未读取", "is a symbolic link, not read"),
    "special": ("不是普通文件（FIFO、设备或套接字），未读取", "is not a regular file (a FIFO, a device or a socket), not read"),
    "not_a_file": ("是文件夹，不是文件", "is a folder, not a file"),
    "too_large": ("超过大小上限 {cap}，未读取", "is over the size cap of {cap}, not read"),
    "over_total": ("提交的文件合计超过上限 {cap}，未读取", "the submission's files together are over {cap}, not read"),
    "unreadable": ("无法读取", "cannot be read"),
    "no_exercise_files": ("没有练习文件（exNN_*.py）", "no exercise file (exNN_*.py)"),
    "no_notebooks": ("没有可读的 notebook", "no readable notebook"),
    "crash": ("评分进程在这份提交上崩溃", "the grader crashed on this submission"),
}


@dataclass(frozen=True)
class Student:
    name: str  # the folder's exact name (as printable text, see `display_name`)
    key: str  # `student_key(name)`: the state file, the staged folder
    folder: Path  # OUT/staged/<key>: the accepted .py files (what the workers import)
    fingerprint: str  # sha256 of the accepted files and the refusals (a change regrades)
    present: frozenset = frozenset()  # ids of the exercises whose file was accepted
    problems: tuple = ()  # ({"file": name, "reason": code, "cap": bytes}, …)
    refused: dict = field(default_factory=dict, hash=False, compare=False)  # file name -> problem


def display_name(name: str) -> str:
    """The name as text: the exact name when it is UTF-8, its odd bytes as \\xNN otherwise."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def student_key(name: str) -> str:
    """An injective, filesystem-safe key for a folder name: escapes, then a hash of the bytes.

    >>> student_key("alice smith"), student_key("alice_smith")
    ('alice%20smith~6f1c…', 'alice_smith~0b9e…')
    """
    raw = os.fsencode(name)
    readable = urllib.parse.quote_from_bytes(raw, safe="-_@+")[:64]
    if readable.startswith("."):
        readable = "%2E" + readable[1:]  # no hidden state files
    return f"{readable}~{hashlib.sha256(raw).hexdigest()[:20]}"


def reason_text(problem: dict, lang: str) -> str:
    zh, en = REASONS.get(problem.get("reason"), ("无法评分", "cannot be graded"))
    text = (en if lang == "en" else zh).format(cap=_size(problem.get("cap", 0)))
    return f"{problem['file']}: {text}" if problem.get("file") else text


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} B"


def _scan(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # a link to a folder the instructor made counts as the folder
    except OSError:
        return False


def _links_into_the_kit(entry: os.DirEntry) -> bool:
    """A student folder that is a link to the kit (its solutions/) or into /proc (/proc/self/cwd)."""
    if not entry.is_symlink():
        return False
    from grader.model.paths import KIT_ROOT

    real = os.path.realpath(entry.path)
    kit = os.path.realpath(KIT_ROOT)
    return real == kit or real.startswith(kit + os.sep) or os.readlink(entry.path).startswith("/proc")


def is_nbgrader_dir(root: Path) -> bool:
    """`submitted/<student>/<assignment>/*.ipynb` (root may be the course folder or submitted/)."""
    root = root / "submitted" if (root / "submitted").is_dir() else root
    for student in (e for e in _scan(root) if _is_dir(e)):
        for assignment in (e for e in _scan(Path(student.path)) if _is_dir(e)):
            if any(e.name.endswith(".ipynb") for e in _scan(Path(assignment.path))):
                return True
    return False


def find_students(root: Path, course: Course, staged: Path, *, skip: tuple[Path, ...] = ()) -> list[Student]:
    """Every folder under `root` as a Student, in name order (`skip`: OUT, when it lies in root)."""
    root = Path(root)
    nbgrader = is_nbgrader_dir(root)
    if nbgrader and (root / "submitted").is_dir():
        root = root / "submitted"
    skipped = {os.path.realpath(p) for p in skip}
    students = []
    for entry in _scan(root):
        if not _is_dir(entry) or os.path.realpath(entry.path) in skipped:
            continue
        key = student_key(entry.name)
        target = Path(staged) / key
        if _links_into_the_kit(entry):  # grader.sandbox.intake: the kit's files are never a submission
            files, problems = {}, [{"file": display_name(entry.name), "reason": "link"}]
        elif nbgrader:
            files, problems = _notebook_files(Path(entry.path), course)
        else:
            files, problems = _source_files(_exercise_folder(Path(entry.path)))
        fingerprint = _stage(target, files, problems)
        names = set(files)
        present = frozenset(ex.id for ex in course.exercises if ex.file in names)
        if not any(EXERCISE_FILE.match(n) for n in names) and not problems:
            problems.append({"file": "", "reason": "no_notebooks" if nbgrader else "no_exercise_files"})
        refused = {p["file"]: p for p in problems if p.get("file")}
        students.append(Student(display_name(entry.name), key, target, fingerprint, present, tuple(problems), refused))
    return students


def _exercise_folder(folder: Path) -> Path:
    inner = folder / "exercises"
    if inner.is_dir() and not inner.is_symlink() and any(EXERCISE_FILE.match(e.name) for e in _scan(inner)):
        return inner
    return folder


def _refusal(entry: os.DirEntry, cap: int) -> dict | None:
    """Why a file is not read (from lstat alone), or None."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return {"file": display_name(entry.name), "reason": "unreadable"}
    if stat.S_ISLNK(info.st_mode):
        return {"file": display_name(entry.name), "reason": "link"}
    if stat.S_ISDIR(info.st_mode):
        return {"file": display_name(entry.name), "reason": "not_a_file"}
    if not stat.S_ISREG(info.st_mode):
        return {"file": display_name(entry.name), "reason": "special"}
    if info.st_size > cap:
        return {"file": display_name(entry.name), "reason": "too_large", "cap": cap}
    return None


def _source_files(folder: Path) -> tuple[dict[str, bytes], list[dict]]:
    """The folder's top-level .py files that may be read, and the problems of the others."""
    files: dict[str, bytes] = {}
    problems: list[dict] = []
    total = 0
    for entry in _scan(folder):
        if not entry.name.endswith(".py"):
            continue
        refusal = _refusal(entry, SOURCE_CAP)
        if refusal is None and display_name(entry.name) != entry.name:
            refusal = {"file": display_name(entry.name), "reason": "unreadable"}  # not a Python module name
        if refusal is None:
            data = read_capped(entry.path, SOURCE_CAP)
            if data is None:
                refusal = {"file": entry.name, "reason": "unreadable"}
            elif total + len(data) > TOTAL_CAP:
                refusal = {"file": entry.name, "reason": "over_total", "cap": TOTAL_CAP}
            else:
                files[entry.name] = data
                total += len(data)
        if refusal is not None:
            problems.append(refusal)
    return files, problems


def _notebook_files(folder: Path, course: Course) -> tuple[dict[str, bytes], list[dict]]:
    """The exercise files extracted from a student's nbgrader notebooks (capped before parsing)."""
    texts: dict[str, str] = {}
    problems: list[dict] = []
    for assignment in (e for e in _scan(folder) if _is_dir(e)):
        for entry in _scan(Path(assignment.path)):
            if not entry.name.endswith(".ipynb"):
                continue
            refusal = _refusal(entry, NOTEBOOK_CAP)
            data = read_capped(entry.path, NOTEBOOK_CAP) if refusal is None else None
            if refusal is None and data is None:
                refusal = {"file": display_name(entry.name), "reason": "unreadable"}
            if refusal is not None:
                refusal["file"] = f"{display_name(assignment.name)}/{refusal['file']}"
                problems.append(refusal)
                continue
            for name, code in extract_notebook_text(data, entry.name, course).items():
                texts[name] = texts.get(name, "") + code
    return {name: code.encode("utf-8") for name, code in texts.items()}, problems


def _stage(target: Path, files: dict[str, bytes], problems: list[dict]) -> str:
    """Write the accepted files into `target` (only what changed); the submission's fingerprint."""
    digest = hashlib.sha256(b"staged-v1\0")
    target.mkdir(parents=True, exist_ok=True)
    for old in _scan(target):
        if old.name not in files and not old.name.startswith("."):
            try:
                os.unlink(old.path)
            except OSError:
                pass
    for name in sorted(files):
        data = files[name]
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        path = target / name
        if read_capped(str(path), SOURCE_CAP) != data:
            atomic_write(path, data, mode=0o644)
    digest.update(json.dumps(problems, sort_keys=True).encode())
    return digest.hexdigest()
