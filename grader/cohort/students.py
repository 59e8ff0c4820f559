"""The students of a cohort: one per folder, found without trusting a single file in it.

DIR holds one folder per student with their `exNN_*.py` files (or an `exercises/` folder
inside it), or is an nbgrader `submitted/` folder (`<student>/<assignment>/*.ipynb`).
Every folder of DIR is a student, dot-folders included, and gets exactly one row:

- Each folder is keyed by an injective encoding of its exact name (`student_key`): percent
  escapes plus a hash of the name's bytes, so `alice smith` and `alice_smith` (or `Alice`
  and `alice` on a case-blind disk) never share a state file.
- The folder is read as data by `grader.sandbox.intake`'s rules (`survey`: `lstat` only, no
  link followed, at most 4000 entries) before a byte is read, and only where exercises are
  read from: its top level and `exercises/` (nbgrader: each assignment folder). Anything
  else (a `.venv`, `.git`, a data folder) is never walked: a correct submission beside a
  virtual environment keeps its marks, and a huge tree costs nothing.
- A file the exercises are read from (a top-level `*.py` of the folder they are found in)
  that is a link, a FIFO, a device, a socket, a folder or over `SOURCE_CAP` is refused
  *without being opened* and named in the student's problems; the other files are still
  graded. A link or special file among what is looked at but not read (`data -> …`, a linked
  `exercises/` beside top-level files, a FIFO named `notes`) is never opened either: it is
  named in the `note` column ("not read") and costs nothing. Accepted files are copied
  (capped, checked to be the file the survey saw) into OUT/staged/<key>/, the folder the
  workers then read; the fingerprint of the submission is taken while copying.
- What refuses the whole submission (every exercise 0, the reason in the `note` column and in
  every check's message): a folder that cannot be read, or one with more than 4000 entries
  where exercises are read from; a student folder that is a link into the kit, into OUT or
  another batch's OUT, or through /proc (however many links on the way), a link that leads
  nowhere (a missing target, a loop), a link to another student's folder or into one, or to
  DIR itself or above it (a student's work is graded once, under its own folder's name).
  Files beside the folders are not students (`not_students` names them).
- nbgrader notebooks are surveyed and capped the same way before they are parsed; their
  solution cells are extracted into OUT/staged/<key>/.

    >>> students = find_students(Path("cohort"), course, Path("out/staged"))
    >>> students[0].name, students[0].present, students[0].problems
    ('alice smith', {'ex01', 'ex02'}, [{'file': 'ex03_param_budget.py', 'reason': 'special', …}])
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.cohort.capped import NOTEBOOK_CAP, SOURCE_CAP, TOTAL_CAP, read_capped
from grader.cohort.layout import out_holding
from grader.cohort.links import resolves_through_proc
from grader.cohort.names import display_name, student_key, terminal_name
from grader.cohort.notebooks import extract_notebook_text
from grader.cohort.reasons import WHOLE
from grader.cohort.renames import renamed
from grader.model.course import Course, holds_course_files
from grader.model.files import atomic_write
from grader.sandbox.intake import EXERCISE_NAME, SubmissionRefused, Survey, reading_order, survey

INNER = ("exercises",)  # the folder inside a student's folder the exercise files may be in


@dataclass(frozen=True)
class Student:
    name: str  # the folder's exact name (as printable text, see `display_name`)
    key: str  # `student_key(name)`: the state file, the staged folder
    folder: Path  # OUT/staged/<key>: the accepted .py files (what the workers import)
    fingerprint: str  # sha256 of the accepted files and the refusals (a change regrades)
    present: frozenset = frozenset()  # ids of the exercises whose file was accepted
    problems: tuple = ()  # ({"file": name, "reason": code, "cap": bytes}, …)
    refused: dict = field(default_factory=dict, hash=False, compare=False)  # file name -> problem


def _scan(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry, follow: bool = True) -> bool:
    """A folder; `follow`: a link to a folder counts (a student folder the instructor linked),
    never inside a student's folder (what the student made)."""
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _peer_of(real: str, top: str, folders: dict[str, str]) -> str | None:
    """For a student folder that is a link, resolved to `real`: the folder of DIR (resolved:
    `top`) it shares its files with (another student's, one inside it, or one an earlier link
    of DIR already leads to: that name; DIR itself or a folder above it: ""), or None when it
    leads outside DIR to a folder no other entry of DIR is."""
    if real == top or top.startswith(real.rstrip(os.sep) + os.sep):
        return ""
    if real in folders:
        return display_name(folders[real])
    if real.startswith(top.rstrip(os.sep) + os.sep):  # inside a folder of DIR
        return display_name(os.path.relpath(real, top).split(os.sep)[0])
    return None


def _leads_nowhere(entry: os.DirEntry) -> bool:
    """A link whose target is missing or that loops (`a -> b`, `b -> a`)."""
    return entry.is_symlink() and not os.path.exists(entry.path)


def _links_into(path: str, real: str, course: Course, outs: set[str]) -> bool:
    """A student folder that is a link (`path`, resolved: `real`) to the kit (its solutions/),
    into OUT or any other batch's OUT (other students' staged files, the gradebook) or into
    /proc (/proc/self/cwd)."""
    from grader.model.paths import KIT_ROOT

    kits = {os.path.realpath(p) for p in (KIT_ROOT, course.root, course.solutions_dir)} | outs
    inside = any(real == kit or real.startswith(kit.rstrip(os.sep) + os.sep) for kit in kits)
    holder = out_holding(real)
    # A folder that holds OUT's two files and exercise files of its own is a student's folder
    # with a cohort file in it, not an OUT (whose exercise files are only under staged/).
    into_an_out = holder is not None and not (holder == real and holds_exercise_files(Path(real)))
    return inside or into_an_out or resolves_through_proc(path)


def holds_exercise_files(folder: Path, own: tuple[str, ...] = ("staged", "students", "reports", "cache")) -> bool:
    """Whether a folder holds what a submission is read from: an `exNN_*.py` or a notebook at its
    top level or one folder down (`exercises/`, an nbgrader assignment), links not followed;
    `own`: OUT's folders, whose staged copies do not count."""
    def found(entries) -> bool:
        return any(EXERCISE_NAME.match(e.name) or e.name.endswith(".ipynb") for e in entries)

    top = _scan(Path(folder))
    return found(top) or any(found(_scan(Path(e.path))) for e in top if e.name not in own and _is_dir(e, follow=False))


def is_nbgrader_dir(root: Path) -> bool:
    """`submitted/<student>/<assignment>/*.ipynb` (root may be the course folder or submitted/)."""
    return cohort_layout(root)[1]


def cohort_layout(root: Path) -> tuple[Path, bool]:
    """Where the student folders are, and whether they are nbgrader's: (folder, nbgrader).

    nbgrader's when more student folders hold an assignment's notebooks
    (`<student>/<assignment>/*.ipynb`, the assignment not a hidden folder such as
    `.ipynb_checkpoints`) than hold exercise files (`exNN_*.py`, at the top or in `exercises/`):
    one student's stray notebook never turns a cohort of `.py` files into notebooks. The
    students are in `root/submitted` (an nbgrader course folder) only when that holds nbgrader
    submissions and no other folder of root holds exercise files (a student named `submitted`
    is one student of root).

        cohort_layout(Path("course"))   # course/submitted/alice/ch05/ch05.ipynb -> (course/submitted, True)
    """
    root = Path(root)
    loose, notebooks = _votes(root, leave_out="submitted")
    submitted = root / "submitted"
    if not loose and _course_folder(root) and os.path.isdir(submitted):  # never raises (a link to a name too long)
        inside_loose, inside_notebooks = _votes(submitted)
        if inside_notebooks > inside_loose:
            return submitted, True
    return root, notebooks > loose and notebooks > 0


def _course_folder(root: Path) -> bool:
    """Is `root` an nbgrader course folder (its `nbgrader_config.py` or `gradebook.db`, or the
    `source/` beside `submitted/` every nbgrader course has, its configuration kept in
    ~/.jupyter)? Only then is its `submitted/` nbgrader's: elsewhere a folder so named is a
    student's."""
    return any(os.path.isfile(root / name) for name in ("nbgrader_config.py", "gradebook.db")) or \
        (os.path.isdir(root / "source") and not os.path.islink(root / "source"))


def _votes(folder: Path, leave_out: str | None = None) -> tuple[int, int]:
    """How many student folders of `folder` hold only exercise files, and how many only an
    assignment's notebooks (links below a student's folder not followed)."""
    loose = notebooks = 0
    for student in (e for e in _scan(folder) if e.name != leave_out and _is_dir(e)):
        held = _kinds(student.path)  # a folder holding both (a stub beside the notebook) has no say
        loose += held == {"files"}
        notebooks += held == {"notebooks"}
    return loose, notebooks


def _kinds(folder: str) -> set[str]:
    """What a student's folder holds its work as: "files" (exercise files at its top or in
    `exercises/`), "notebooks" (an assignment's: `<assignment>/*.ipynb`, the assignment not a
    hidden folder such as `.ipynb_checkpoints`), both or neither. Links below it are not
    followed."""
    top = _scan(Path(folder))
    inner = [e for e in top if e.name in INNER and _is_dir(e, follow=False)]
    kinds = set()
    if any(EXERCISE_NAME.match(e.name) for e in top) or \
            any(EXERCISE_NAME.match(e.name) for d in inner for e in _scan(Path(d.path))):
        kinds.add("files")
    if any(e.name.endswith(".ipynb") for a in top if not a.name.startswith(".") and _is_dir(a, follow=False)
           for e in _scan(Path(a.path))):
        kinds.add("notebooks")
    return kinds


def not_students(root: Path) -> list[str]:
    """The entries of DIR that get no row: files, FIFOs and the like beside the student folders
    (a `bob.zip` never unpacked), by name, for the batch to say so."""
    root, _ = cohort_layout(root)
    return [terminal_name(e.name) for e in _scan(root) if not (_is_dir(e) or _leads_nowhere(e))]


def find_students(root: Path, course: Course, staged: Path, *, skip: tuple[Path, ...] = ()) -> list[Student]:
    """Every folder under `root` as a Student, in name order (`skip`: OUT, when it lies in root)."""
    root, nbgrader = cohort_layout(root)
    skipped = {os.path.realpath(p) for p in skip}
    entries = _scan(root)
    top = os.path.realpath(root)
    folders = {os.path.join(top, e.name): e.name for e in entries if not e.is_symlink() and _is_dir(e)}
    students = []
    for entry in entries:
        dead = _leads_nowhere(entry)  # a link to a student's folder that is gone still has its row
        # Resolved once: what is checked is what is read (a folder swapped for a link to the
        # kit after this is refused by the survey, which follows no link on the way).
        try:
            real = os.path.realpath(entry.path)
        except OSError:  # a link realpath may not follow (`/proc/1/root/…`): refused, never the batch's end
            real = None
        linked = entry.is_symlink() or real != os.path.join(top, entry.name)
        if real is not None and (not (dead or _is_dir(entry)) or (not linked and real in skipped)):
            continue  # files beside the folders; OUT itself (a link to it is a student's row, refused below)
        key = student_key(entry.name)
        target = Path(staged) / key
        peer = _peer_of(real, top, folders) if linked and real is not None else None
        as_notebooks = nbgrader
        if real is None:
            files, problems = {}, [{"file": display_name(entry.name), "reason": "kit_link"}]
        elif dead:
            files, problems = {}, [{"file": display_name(entry.name), "reason": "dead_link"}]
        elif linked and _links_into(entry.path, real, course, skipped):  # the kit's and OUT's are no submission
            files, problems = {}, [{"file": display_name(entry.name), "reason": "kit_link"}]
        elif peer is not None:  # another student's work is theirs, graded once, under their name
            files, problems = {}, [{"file": display_name(entry.name), "reason": "peer_link", "peer": peer}
                                   if peer else {"file": display_name(entry.name), "reason": "dir_link"}]
        else:
            if linked:  # a folder outside DIR: graded once, as the first link to it (a later one is its peer)
                folders.setdefault(real, entry.name)
            # each folder read as what it holds (a notebook student among .py ones, or the reverse);
            # one holding both (the stub beside the notebook, a scratch file) as most of the cohort
            kinds = _kinds(real)
            as_notebooks = nbgrader if len(kinds) != 1 else kinds == {"notebooks"}
            files, problems = _read_student(real, course, as_notebooks)
        fingerprint = _stage(target, files, problems)
        names = set(files)
        present = frozenset(ex.id for ex in course.exercises if ex.file in names)
        if not any(EXERCISE_NAME.match(n) for n in names) and all(p.get("unread") for p in problems):
            problems.append({"file": "", "reason": "no_notebooks" if as_notebooks else "no_exercise_files"})
        if any(p["reason"] in (WHOLE, "kit_link", "dead_link", "peer_link", "dir_link") for p in problems):  # every exercise says why
            refused = {ex.file: problems[0] for ex in course.exercises}
        else:
            refused = {p["file"]: p for p in problems if p.get("file") and not p.get("unread")}
        students.append(Student(display_name(entry.name), key, target, fingerprint, present, tuple(problems), refused))
    return students


def _whole(err: SubmissionRefused) -> dict:
    """The problem that refuses a whole submission, in intake's words (which name the entry)."""
    return {"file": "/".join(display_name(p) for p in err.parts), "reason": WHOLE, "zh": err.zh, "en": err.en}


def _read_student(folder: str, course: Course, nbgrader: bool) -> tuple[dict[str, bytes], list[dict]]:
    """The files to stage and the problems, the folder surveyed by intake's rules first.

    Links the instructor made on the way to the folder (and the folder itself, when it is one)
    are taken as they are: `folder` is resolved (`realpath`) by the caller, who checked that
    path; below it nothing is followed, and only the folders the
    exercises may be read from are walked. A link or special file is refused alone: as a file
    the exercises are read from, that exercise says why; anywhere else it is only noted.
    """
    try:  # `folder` is resolved already: the survey follows no link on its way to it
        found = survey(folder, descend=_assignment if nbgrader else _inner, tolerate=_alone)
        return _notebook_files(found, course) if nbgrader else _source_files(found, course)
    except SubmissionRefused as err:
        return {}, [_whole(err)]


def _inner(parts: tuple[str, ...]) -> bool:
    """Walk `exercises/`, the one sub-folder exercise files are read from."""
    return parts == INNER


def _assignment(parts: tuple[str, ...]) -> bool:
    """nbgrader: walk each assignment folder (`<assignment>/*.ipynb`)."""
    return len(parts) == 1


def _alone(_parts: tuple[str, ...], _err) -> bool:
    """Every link and special file is recorded, never followed, and refuses nothing else."""
    return True


def _unread(found: Survey, read: set[tuple[str, ...]]) -> list[dict]:
    """The links and special files looked at but not among the files `read` from: noted, not read."""
    return [{"file": "/".join(display_name(p) for p in err.parts), "reason": _kind(err), "unread": True}
            for err in found.problems if err.parts not in read]


def _kind(err: SubmissionRefused) -> str:
    return err.reason if err.reason in ("link", "unreadable") else "special"


def _at(found: Survey, parent: tuple[str, ...]) -> dict[str, os.stat_result | SubmissionRefused]:
    """The names directly in folder `parent`: each its `lstat`, or the refusal the survey let through."""
    here: dict = {p[-1]: info for p, info in found.entries.items() if p[:-1] == parent}
    here.update({err.parts[-1]: err for err in found.problems if err.parts[:-1] == parent})
    return dict(sorted(here.items()))


def _refusal(name: str, info, cap: int) -> dict | None:
    """Why a file is not read (from the survey alone), or None."""
    if isinstance(info, SubmissionRefused):
        return {"file": display_name(name), "reason": _kind(info)}
    if stat.S_ISDIR(info.st_mode):
        return {"file": display_name(name), "reason": "not_a_file"}
    if info.st_size > cap:
        return {"file": display_name(name), "reason": "too_large", "cap": cap}
    return None


def _read_one(found: Survey, parts: tuple[str, ...], cap: int) -> bytes | None:
    data = found.read([parts], cap)[parts]
    return None if isinstance(data, SubmissionRefused) else data


def _source_files(found: Survey, course: Course) -> tuple[dict[str, bytes], list[dict]]:
    """The `*.py` files of the folder the exercises are in, and the problems of the others."""
    inner = _at(found, INNER) if INNER in found.entries else {}
    base = INNER if holds_course_files(inner, course) else ()
    files: dict[str, bytes] = {}
    problems: list[dict] = []
    total = 0
    here = {name: info for name, info in _at(found, base).items() if name.endswith(".py")}
    for name, info in sorted(here.items(), key=lambda item: reading_order(item[0])):
        refusal = _refusal(name, info, SOURCE_CAP)
        if refusal is None and display_name(name) != name:
            refusal = {"file": display_name(name), "reason": "unreadable"}  # not a Python module name
        if refusal is None and total + info.st_size > TOTAL_CAP:
            refusal = {"file": name, "reason": "over_total", "cap": TOTAL_CAP}
        if refusal is None:
            data = _read_one(found, base + (name,), SOURCE_CAP)
            if data is None:
                refusal = {"file": name, "reason": "unreadable"}
            else:
                files[name] = data
                total += len(data)
        if refusal is not None:
            problems.append(refusal)
    if base:  # an exercise file beside exercises/ is not read (another copy of it, or one missing there): say so
        problems += [{"file": display_name(name), "reason": "beside_inner", "unread": True}
                     for name, info in _at(found, ()).items()
                     if EXERCISE_NAME.match(name) and not isinstance(info, SubmissionRefused)]
    present = frozenset(ex.id for ex in course.exercises if ex.file in files)
    problems += renamed(_at(found, base), course, present, inner=None if base else INNER[0])
    return files, problems + _unread(found, {base + (name,) for name in here})


def _notebook_files(found: Survey, course: Course) -> tuple[dict[str, bytes], list[dict]]:
    """The exercise files extracted from a student's nbgrader notebooks (capped before parsing,
    and each file at SOURCE_CAP however many notebooks add to it)."""
    texts: dict[str, bytes] = {}
    over: set[str] = set()
    problems: list[dict] = []
    read: set[tuple[str, ...]] = set()
    for assignment, kind in _at(found, ()).items():
        if isinstance(kind, SubmissionRefused) or not stat.S_ISDIR(kind.st_mode) or assignment.startswith("."):
            continue  # a hidden folder (Jupyter's .ipynb_checkpoints, an old copy) is no assignment
        listing = _at(found, (assignment,))
        # nbgrader grades the notebook it released (`ch05/ch05.ipynb`): beside it, a student's
        # copies (`ch05_old.ipynb`, `ch05-Copy1.ipynb`) are noted, never graded over it
        released = f"{assignment}.ipynb"
        for name, info in listing.items():
            if not name.endswith(".ipynb"):
                continue
            if released in listing and name != released:
                read.add((assignment, name))
                problems.append({"file": f"{display_name(assignment)}/{display_name(name)}", "reason": "extra_notebook",
                                 "peer": released, "unread": True})
                continue
            read.add((assignment, name))
            refusal = _refusal(name, info, NOTEBOOK_CAP)
            data = _read_one(found, (assignment, name), NOTEBOOK_CAP) if refusal is None else None
            if refusal is None and data is None:
                refusal = {"file": display_name(name), "reason": "unreadable"}
            if refusal is not None:
                refusal["file"] = f"{display_name(assignment)}/{refusal['file']}"
                problems.append(refusal)
                continue
            for module, code in extract_notebook_text(data, name, course).items():
                if module in over:
                    continue
                blob = None if code is None else code.encode("utf-8", "surrogatepass")
                if blob is None or len(texts.get(module, b"")) + len(blob) > SOURCE_CAP:
                    over.add(module)  # as a loose file over the cap would be: refused, and said
                    texts.pop(module, None)
                    problems.append({"file": display_name(module), "reason": "too_large", "cap": SOURCE_CAP})
                else:
                    texts[module] = texts.get(module, b"") + blob
    return texts, problems + _unread(found, read)


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
