"""`grade batch DIR --out OUTDIR`: grade a cohort, every folder exactly once, within bounded time.

DIR holds one folder per student (`grader.cohort.students`: found with lstat, capped,
staged into OUTDIR/staged/), or is an nbgrader `submitted/` folder.

How it runs:

- OUTDIR is locked for the run (`gradebook.hold_out`: a second batch on it is refused, and
  so is another cohort); an OUTDIR that cannot be written is refused before any grading.
- Grading is official: each of the `-j` judge slots (no more than there are students left to
  grade) gets a zygote of its own inside the run's isolation (bubblewrap, or the container tier
  chosen explicitly: `grader.sandbox.isolation`), which proves before any student runs that it
  sees nothing it must not. This process then
  loads pytest and the checks and forks the `-j` judges (`grader.cohort.judges`). Each
  exercise of each student runs in its own worker, and nothing a worker started or wrote
  outlives it; an exercise the student did not hand in is recorded as missing without
  running anything.
- Time is bounded per check, per exercise and per submission (`grader.run.budgets`), so one
  student costs at most `worst_case_seconds(course)` of student time.
- Each student's result is written to OUTDIR/students/<key>.json atomically as soon as it is
  known. A rerun grades only the students without a current one (their files, the course
  and the grader unchanged), recomputing every saved score from its checks: after kill -9
  the gradebook comes out identical. grades.csv and results.json are assembled at the end,
  again atomically, with a row for every folder.

    >>> book = run_batch(course, Path("cohort"), Path("out"), jobs=2)
    >>> sorted(book["students"]), book["students"]["alice smith"]["score"]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.cohort.gradebook import (
    STATE_VERSION,
    OutError,
    ResultsMissing,
    assemble,
    cohort_text,
    grades_csv,
    held_cohort,
    hold_out,
    load_done,
    merge_gradebooks,
    roster_digest,
    sealed_out,
    write_gradebook,
)
from grader.cohort.judges import FORMAT_EXT, Judge, drive
from grader.cohort.layout import COHORT_FILE, LOCK_NAME, holds_lock, holds_only_out_entries, inside_an_out
from grader.cohort.notebooks import extract_notebook
from grader.cohort.report_html import write_cohort_report
from grader.cohort.names import student_key, terminal_name
from grader.cohort.students import Student, find_students, is_nbgrader_dir, not_students
from grader.model.course import Course
from grader.model.fingerprint import answers_fingerprint, derived_fingerprint
from grader.model.messages import say
from grader.model.paths import inside_the_kit
from grader.run.budgets import worst_case_seconds

__all__ = [
    "FORMAT_EXT",
    "CorpusMissing",
    "OutError",
    "ResultsMissing",
    "Student",
    "assemble",
    "check_out",
    "course_fingerprint",
    "extract_notebook",
    "find_students",
    "grades_csv",
    "is_nbgrader_dir",
    "load_done",
    "merge_gradebooks",
    "run_batch",
    "student_key",
    "write_gradebook",
]


def course_fingerprint(course: Course, ids: list[str], lang: str, answers_fp: str | None = None) -> str:
    """Everything a grade depends on besides the student: course, checks, references, probes
    (`answers_fingerprint`, given when the caller has it), the exercises graded and the language."""
    return derived_fingerprint(answers_fp or answers_fingerprint(course), str(STATE_VERSION), ",".join(ids), lang)


def check_out(root: Path, out: Path) -> None:
    """Refuse an OUTDIR that cannot hold a gradebook (raises OutError), before any grading."""
    given_root, given_out = Path(os.path.abspath(root)), Path(os.path.abspath(out))
    if given_root in given_out.parents and (given_root / given_out.relative_to(given_root).parts[0]).is_symlink():
        # a student's folder that is a link (resolved, it is elsewhere and the check below misses it)
        raise OutError(f"--out {given_out}: 是提交目录里某个学生的文件夹（一个链接）或在其中 / is a student's folder "
                       f"in the submissions folder (a link), or inside one; choose a new folder, or one outside it")
    root, out = Path(root).resolve(), Path(out).resolve()
    if out == root:
        raise OutError(f"--out {out}: 不能是提交目录本身 / cannot be the submissions folder itself")
    if out.exists() and not out.is_dir():
        raise OutError(f"--out {out}: 已存在且不是文件夹 / exists and is not a folder")
    if inside_the_kit(out):
        raise OutError(f"--out {out}: 在工具包自己的文件夹里（solutions/、exercises/、grader/ …）/ is inside one of "
                       f"the kit's own folders (solutions/, exercises/, grader/, …); choose a folder outside them")
    if root in out.parents and (out.parent != root or (out.exists() and not _gradebook_of(out, root)
                                                       and not _unsealed_out_of(out, root))):
        # a student's folder (or inside one): grading into it would drop that student's row
        raise OutError(f"--out {out}: 是提交目录里某个学生的文件夹（或在其中）/ is a student's folder in the "
                       f"submissions folder (or inside one); choose a new folder, or one outside it")
    if out.is_dir() and not any((out / name).exists() for name in (COHORT_FILE, LOCK_NAME)) and any(out.iterdir()):
        # the kit, its solutions/, the working folder of `--out ""`, a home folder: never written
        # into (a batch's OUT has both files, a merged gradebook's the lock)
        raise OutError(f"--out {out}: 已存在、非空，且不是 grade batch 或 grade merge 的输出目录 / exists, is not "
                       f"empty and holds no gradebook of grade batch or grade merge; choose a new or an empty folder")
    if inside_an_out(str(out.parent)):  # its staged copies or gradebook: written over, or graded as a cohort
        raise OutError(f"--out {out}: 在另一个 grade batch 的输出目录里 / is inside another grade batch's OUT; "
                       f"choose a folder outside it")
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise OutError(f"--out {out}: 无法写入 / cannot be written ({probe})")


def _linked_student_folders(root: Path, needed: list[str]) -> list[str]:
    """Where DIR's links to student folders lead (outside DIR, most often): hidden from every
    worker like DIR itself, or one student's code reads another's work there. Only folders that
    hold a student's work (exercise files, notebooks), and never one holding what the workers
    need (`needed`: the interpreter, the lesson's data): a link `data -> /srv/datasets` beside
    the students would otherwise cost every student the corpus. A link realpath cannot follow
    (`/proc/1/root/…`) is passed over: its row says why (grader.cohort.students)."""
    from grader.cohort.students import holds_exercise_files

    found = []
    try:
        with os.scandir(root) as entries:
            listed = list(entries)
    except OSError:
        return found
    for entry in listed:
        try:
            if not entry.is_symlink():
                continue
            target = os.path.realpath(entry.path)
            if not os.path.isdir(target) or Path(target).is_relative_to(root):
                continue
            if any(p == target or p.startswith(target.rstrip(os.sep) + os.sep) for p in needed):
                continue
            if holds_exercise_files(Path(target)):
                found.append(target)
        except OSError:
            continue
    return found


def _folders_in(root: Path) -> list[Path]:
    """DIR's own folders (no links), where another run's OUT may be."""
    try:
        with os.scandir(root) as entries:
            return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _gradebook_of(out: Path, root: Path) -> bool:
    """Whether a folder of DIR is this cohort's OUT from another run, not a student's folder
    dressed as one: its cohort file names DIR with the seal only a run of this user's makes
    (grader.cohort.seal), and it holds no exercise file or notebook where a submission's are
    read (a student's `cohort.json` and lock file do not make their folder OUT: it keeps its row)."""
    from grader.cohort.students import holds_exercise_files

    try:
        return sealed_out(out, root) and not holds_exercise_files(out)
    except OSError:  # a folder that cannot be read is a student's (it keeps its row), never OUT
        return False


def _unsealed_out_of(out: Path, root: Path) -> bool:
    """A folder of DIR that is this cohort's OUT, its seal missing or no longer holding: killed
    before its cohort file was written (its lock alone), written by an older kit or while the
    key could not be made, or moved. It holds the lock file, no cohort file of another cohort
    and no exercise file or notebook; resumed, it is sealed again (`gradebook.hold_out`)."""
    from grader.cohort.students import holds_exercise_files

    try:
        return (holds_lock(out) and held_cohort(out) in (None, cohort_text(root)) and not holds_exercise_files(out)
                and holds_only_out_entries(out))
    except OSError:  # a folder that cannot be read is a student's (it keeps its row), never OUT
        return False


def run_batch(course: Course, root: Path, out: Path, *, jobs: int = 1, shard: tuple[int, int] = (1, 1),
              ids: list[str] | None = None, lang: str = "zh", formats: list[str] | None = None,
              progress: bool | None = None, isolation: str | None = None) -> dict:
    """Grade every student under `root` into `out`; returns the gradebook (also written).

    `IsolationRefused` (exit 3) before anything is graded where the run's isolation tier
    (`isolation`, else bubblewrap) cannot be had here."""
    from grader.run.startup import IsolationRefused, data_folders
    from grader.sandbox import IsolationUnavailable, choose
    from grader.sandbox.bubblewrap import python_roots

    root, out = Path(root).resolve(), Path(out).resolve()
    check_out(root, out)
    try:
        tier = choose(official=True, requested=isolation)
    except IsolationUnavailable as err:
        raise IsolationRefused(err.text(lang)) from None
    needed = [os.path.realpath(p) for p in [*python_roots(), *data_folders(course)]]
    unseen = [str(root), str(out), *_linked_student_folders(root, needed)]
    sys.dont_write_bytecode = True  # the judges write nothing outside OUTDIR, not even __pycache__
    ids = ids or [e.id for e in course.exercises]
    with hold_out(out, cohort=root):
        # this cohort's gradebooks from runs with another --out in DIR: the kit's, not students
        others = [folder for folder in _folders_in(root)
                  if folder != out and holds_lock(folder) and _gradebook_of(folder, root)]
        if others:
            print(say("batch_other_outs", lang, names=", ".join(terminal_name(f.name) for f in others)),
                  file=sys.stderr, flush=True)
        students = find_students(root, course, out / "staged", skip=(out, *others))
        strays = not_students(root)
        if strays:
            shown = ", ".join(strays[:10]) + (f" (+{len(strays) - 10})" if len(strays) > 10 else "")
            print(say("batch_strays", lang, names=shown), file=sys.stderr, flush=True)
        index, count = shard
        roster = {"cohort": len(students), "roster": roster_digest(s.name for s in students)}
        students = [s for n, s in enumerate(students) if n % count == index - 1]
        answers_fp = answers_fingerprint(course)  # digested once: the judges' references take it too
        course_fp = course_fingerprint(course, ids, lang, answers_fp)
        pending = [n for n, s in enumerate(students) if load_done(out, s, course_fp, ids) is None]
        if pending:
            # a sandbox per judge that has a student to grade: each is an interpreter importing torch
            zygotes = start_slots(course, tier, min(jobs, len(pending)), unseen, lang)
            try:
                _grade_pending(zygotes, course, out, students, pending, ids, lang, formats or [], course_fp,
                               answers_fp, progress)
            finally:
                for zygote in zygotes:
                    zygote.close()
        # which part of how large a cohort: `grade merge` refuses a missing or repeated shard
        book = assemble(out, course, ids, students, course_fp, lang, shard={"index": index, "count": count, **roster})
        # OUT/report.html for the instructor; a shard's covers its own students (grade report
        # after grade merge covers all)
        write_cohort_report(out, book, course, {s.name: s.folder for s in students}, lang)
        return book


def start_slots(course: Course, tier: str, jobs: int, unseen: list[str], lang: str) -> list:
    """One started zygote per judge slot, in `tier`: each started from this thread (a zygote ends
    with the thread that started it), then waited for side by side (each imports torch)."""
    from concurrent.futures import ThreadPoolExecutor

    from grader.run.startup import ready_zygote, start_zygote

    zygotes, problem = [], None
    for slot in range(max(1, jobs)):
        try:
            zygotes.append(start_zygote(course, tier, unseen=unseen, slot=slot, lang=lang, wait=False))
        except Exception as err:  # noqa: BLE001 - said once the others are closed
            problem = err
            break
    if problem is None:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for future in [pool.submit(ready_zygote, zygote, lang) for zygote in zygotes]:
                try:
                    future.result()
                except Exception as err:  # noqa: BLE001 - said once all have ended
                    problem = problem or err
    if problem is not None:
        for zygote in zygotes:
            zygote.close()
        raise problem
    return zygotes


def time_bound(course: Course, ids: list[str], pending: int, jobs: int, lang: str = "zh") -> str:
    """The most student time this run can take from here, from course.toml alone (for a CI
    job's timeout): each submission's worst case (`worst_case_seconds`), times the rounds of
    `jobs` judges. Said once the slow reference answers are ready (`grader.cohort.warmup`), so
    what is left of the grader's own time is its comparisons and the gradebook.

    >>> time_bound(course, ["ex01"], 40, 2, "en")
    "40 to grade: at most 60 s of student code each, 20 min in all on 2 judge(s), plus the grader's own time …"
    """

    each = worst_case_seconds(course, ids)
    judges = max(1, min(jobs, pending))
    return say("batch_bound", lang, pending=pending, each=_duration(each), judges=judges,
               total=_duration(-(-pending // judges) * each))


def _duration(seconds: float) -> str:
    """90 -> '90 s', 1200 -> '20 min', 36000 -> '10.0 h'."""
    if seconds < 120:
        return f"{seconds:g} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _grade_pending(zygotes, course, out, students, pending, ids, lang, formats, course_fp, answers_fp, progress):
    from grader.run.startup import load_judge, resolve_corpus

    jobs = max(1, min(len(zygotes), len(pending)))
    # only the exercises some student handed in are worked for ahead (a chapter-5 cohort graded
    # on the whole course trains none of ex12's references) or need the data
    handed_in = [e for e in ids if any(e in students[n].present for n in pending)]
    corpus = resolve_corpus(course)
    if isinstance(corpus, Exception) and any(_reads_the_corpus(course, e) for e in handed_in):
        raise CorpusMissing(corpus)  # every student's data checks would fail for the kit's reason
    load_judge()
    references = _warm_up(course, handed_in, out, answers_fp, corpus, jobs, lang)
    print(time_bound(course, ids, len(pending), jobs, lang), file=sys.stderr, flush=True)

    def make_judge(slot: int) -> Judge:
        return Judge(course, ids, zygotes[slot], slot, out, lang, formats, corpus, course_fp, students,
                     references=references)

    drive(make_judge, students, pending, jobs, progress)


class CorpusMissing(RuntimeError):
    """The lesson's data cannot be had (`error`, a DataError saying how to get it) and graded
    exercises read it: nothing is graded (the students would be charged for it)."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def _reads_the_corpus(course: Course, exercise_id: str) -> bool:
    """Whether an exercise's checks read the lesson's corpus (its check module asks for it)."""
    try:
        return "corpus_path" in (course.unit(exercise_id) / "checks.py").read_text(encoding="utf-8")
    except OSError:
        return True


def _warm_up(course, ids, out, answers_fp, corpus, jobs, lang):
    """The judges' references (nothing written outside OUT), warmed by `grader.cohort.warmup`;
    said on stderr when that took a while (a first run on OUT with ex12)."""
    import time

    from grader.cohort.warmup import warm_references
    from grader.judge.references import LiveReferences

    references = LiveReferences(course, cache_dir=out / "cache", fingerprint=answers_fp)
    started = time.monotonic()
    if warm_references(course, ids, references, corpus, jobs):
        seconds = time.monotonic() - started
        if seconds >= 1:
            print(say("batch_warm", lang, seconds=f"{seconds:.0f}"), file=sys.stderr, flush=True)
    return references
