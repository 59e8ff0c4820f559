"""The gradebook: per-student state files, grades.csv, results.json, merging shards, OUT's lock.

- A student's state is OUT/students/<key>.json (`students.student_key`: injective), written
  atomically. On resume it is trusted only for what it says was checked: every score is
  recomputed from its checks (`passed`, `max_score`), so a state file edited to claim a
  higher total cannot reach the gradebook; a state that does not describe the graded
  exercises is graded again.
- grades.csv has a row per folder, a column per exercise, total, max and `note` (why a
  folder, or some of its files, could not be graded). A name is neutralised the way the
  OWASP guidance on CSV injection says (a leading `=`, `+`, `-`, `@`, tab or CR gets a `'`),
  and so is one starting with `'`, `(` or an invisible character, or reading as `student` or
  `(max)` once case, width and invisible characters are set aside: no name becomes a formula,
  the header, or the `(max)` row, and two names never become the same cell.
- OUT is locked (`flock`) while a batch runs in it, and remembers which cohort it holds:
  a second batch on the same OUT, or another cohort, is refused with a clear message.

    >>> with hold_out(Path("out"), cohort=Path("cohort")):
    ...     assemble(out, course, ids, students, course_fp, "zh")
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import sys
from pathlib import Path

from grader.cohort.cells import HEADER_NAME, MAX_ROW, safe_cell
from grader.cohort.layout import COHORT_FILE, LOCK_NAME
from grader.cohort.reasons import reason_text
from grader.cohort.students import Student
from grader.model.course import Course
from grader.model.files import atomic_write, write_together
from grader.model.messages import say

STATE_VERSION = 2


class OutError(Exception):
    """OUT cannot be used: not a folder, not writable, in use, or holding another cohort."""


class ResultsMissing(OutError):
    """After grading, a student's result is not in OUT (a disk that filled, OUT changed under
    the run): not a usage error; the same command again grades what is missing."""


# --------------------------------------------------------------------------- OUT


@contextlib.contextmanager
def hold_out(out: Path, cohort: Path | None = None):
    """Lock OUT for this batch (exclusive `flock`, dropped by the kernel when we die)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutError(f"--out {out}: 已存在且不是文件夹 / exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        try:  # the owner's alone: staged copies, answers and grades are no other uid's to read
            os.chmod(out, 0o700)  # (as root, a worker's uid then cannot read another batch's OUT)
        except PermissionError:
            pass  # someone else's folder we may write into: left as it is
        fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as err:
        raise OutError(f"--out {out}: 无法写入 / cannot be written ({err.strerror or err})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            raise OutError(f"--out {out}: 另一个 grade batch 正在使用（pid {holder}）/ is in use by another "
                           f"grade batch (pid {holder}); wait for it or choose another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            for stale in [p for where in (".", "students", "reports", "staged/*", "cache/answers")
                          for p in out.glob(f"{where}/.*.tmp")]:
                stale.unlink(missing_ok=True)  # a write killed mid-way (we hold OUT: no one writes one now)
            if cohort is not None:
                _claim(out, Path(cohort))
            _writable_inside(out)
        except OSError as err:
            raise OutError(f"--out {out}: 无法写入 / cannot be written ({err.strerror or err})") from None
        yield out
    finally:
        os.close(fd)


def _writable_inside(out: Path) -> None:
    """The folders a batch writes into, where they exist already (a resumed OUT), can be written:
    a `students/` left by another user is said now, before grading, not as each state fails."""
    folders = [out / name for name in ("students", "reports", "staged", "cache", "cache/answers")]
    staged = out / "staged"
    if staged.is_dir() and not staged.is_symlink():
        folders += [p for p in staged.iterdir() if p.is_dir() and not p.is_symlink()]
    for folder in folders:
        if folder.is_symlink() or (folder.exists() and not (folder.is_dir() and os.access(folder, os.W_OK | os.X_OK))):
            raise OutError(f"--out {out}: {folder.relative_to(out)} 无法写入 / cannot be written; fix its owner or "
                           f"mode, or choose another --out")


def cohort_text(cohort: Path) -> str:
    """How OUT's cohort file names DIR: its resolved path as text (odd bytes escaped)."""
    return os.fsencode(str(Path(cohort).resolve())).decode("utf-8", "backslashreplace")


def held_cohort(out: Path) -> str | None:
    """The cohort OUT's cohort file names, or None (no file, or not one the batch wrote)."""
    held = _cohort_file(out).get("cohort")
    return held if isinstance(held, str) else None


def sealed_out(out: Path, cohort: Path) -> bool:
    """Whether folder `out` is a gradebook a batch (or a merge) of `cohort` wrote: its cohort file
    names the cohort and holds the seal only such a run makes (grader.cohort.seal). A student's
    folder holding a `cohort.json` of its own is not."""
    from grader.cohort.seal import holds_seal

    found, mine = _cohort_file(out), cohort_text(cohort)
    return found.get("cohort") == mine and holds_seal(out, mine, found.get("seal"))


def _cohort_file(out: Path) -> dict:
    """OUT's cohort file as a dict ({} when it is missing or not one a batch wrote).

    Also read in a student's folder (is it another run's OUT?): a link, a FIFO or a file
    larger than a batch writes is not opened or read whole.
    """
    from grader.cohort.capped import read_capped

    data = read_capped(str(Path(out) / COHORT_FILE), 65536)
    try:
        found = json.loads(data.decode("utf-8")) if data is not None else {}
    except (ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _claim(out: Path, cohort: Path) -> None:
    """OUT holds one cohort: the first batch writes which, with OUT's seal (grader.cohort.seal);
    a batch of another is refused. An OUT of this cohort whose seal does not hold (written
    before seals, or moved) is sealed again."""
    from grader.cohort.seal import holds_seal, out_seal

    path = out / COHORT_FILE
    mine, found = cohort_text(cohort), _cohort_file(out)
    held = found.get("cohort") if isinstance(found.get("cohort"), str) else None
    if held is not None and held != mine:
        raise OutError(f"--out {out}: 已保存另一批提交的成绩（{held}）/ holds the grades of another cohort "
                       f"({held}); choose another --out or remove it")
    if held is None or not holds_seal(out, mine, found.get("seal")):
        claim = {"cohort": mine}
        try:
            claim["seal"] = out_seal(out, mine)
        except OSError as err:  # a cache another user made: graded all the same, OUT unsealed
            print(f"--out {out}: 未封印（{err.strerror or err}）/ not sealed ({err.strerror or err}): if it lies inside DIR, a later "
                  f"batch of this cohort will take it for a student's folder", file=sys.stderr, flush=True)
        atomic_write(path, json.dumps(claim, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- state


def state_path(out: Path, student: Student) -> Path:
    return Path(out) / "students" / f"{student.key}.json"


def write_state(out: Path, student: Student, course_fp: str, result: dict) -> None:
    state = {"version": STATE_VERSION, "student": student.name, "key": student.key, "course": course_fp,
             "files": student.fingerprint, "problems": list(student.problems), "result": result}
    # Compact: without `indent` json writes at C speed (these files are read back by a rerun;
    # people read grades.csv and results.json)
    atomic_write(state_path(out, student), json.dumps(state, ensure_ascii=False, separators=(",", ":")))


def load_done(out: Path, student: Student, course_fp: str, ids: list[str]) -> dict | None:
    """The student's saved result, when complete and current, its scores recomputed; else None."""
    try:
        state = json.loads(state_path(out, student).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or state.get("course") != course_fp:
        return None
    if state.get("files") != student.fingerprint or state.get("student") != student.name:
        return None
    problems = state.get("problems")
    if isinstance(problems, list) and any(isinstance(p, dict) and p.get("reason") == "crash" for p in problems):
        return None  # the judge died on it (its own disk full, a kill): graded again, not kept as the student's
    result = recompute(state.get("result"), ids)
    if result is None:
        return None
    return {**state, "result": result}


def _points(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def recompute(result, ids: list[str]) -> dict | None:
    """`result` with every score derived from its checks; None when it is not a result of `ids`.

    A check scores its `max_score` when `passed` (and not manual), else 0; an exercise the
    sum of its checks; the total the sum of the exercises.
    """
    if not isinstance(result, dict) or not isinstance(result.get("exercises"), list):
        return None
    exercises = result["exercises"]
    if [e.get("id") if isinstance(e, dict) else None for e in exercises] != list(ids):
        return None
    fixed = []
    for exercise in exercises:
        checks = exercise.get("checks")
        if not isinstance(checks, list) or not all(isinstance(c, dict) and _points(c.get("max_score"))
                                                   and isinstance(c.get("passed"), bool) for c in checks):
            return None
        checks = [{**c, "score": c["max_score"] if c["passed"] and not c.get("manual") else 0} for c in checks]
        fixed.append({**exercise, "checks": checks, "score": sum(c["score"] for c in checks),
                      "max_score": sum(c["max_score"] for c in checks if not c.get("manual"))})
    return {**result, "exercises": fixed, "score": sum(e["score"] for e in fixed),
            "max_score": sum(e["max_score"] for e in fixed)}


# --------------------------------------------------------------------------- the gradebook


def assemble(out: Path, course: Course, ids: list[str], students: list[Student], course_fp: str,
             lang: str, shard: dict | None = None) -> dict:
    """grades.csv and results.json from the per-student files (atomically): every student, once."""
    entries = {}
    for s in students:
        state = load_done(out, s, course_fp, ids)
        if state is None:
            raise ResultsMissing(f"{s.name}: 评分结果缺失（磁盘满了？评分期间 OUT 被改动了？再运行同一条命令会补评）/ no result "
                           f"was written (is the disk full? was OUT changed during the run? the same command "
                           f"again grades what is missing)")
        name = s.name  # one text per folder name (students.display_name): no two rows share one
        problems = [p for p in state.get("problems") or [] if isinstance(p, dict) and isinstance(p.get("file"), str)]
        entries[name] = {**state["result"], "note": note_text(problems, lang)}
    book = {"version": STATE_VERSION, "exercises": [_exercise_header(course, e, lang) for e in ids],
            **({"shard": shard} if shard else {}), "students": {name: entries[name] for name in sorted(entries)}}
    write_gradebook(out, book)
    return book


NOTE_ITEMS = 10  # problems named in a note; 3,900 links beside the work would make a 1 MB cell


def note_text(problems: list[dict], lang: str) -> str:
    """The `note` column: the first NOTE_ITEMS problems in words, then how many more.

    >>> note = note_text([{"file": f"l{i}", "reason": "link", "unread": True} for i in range(12)], "en")
    >>> note.split("; ")[0], note.split("; ")[-1]
    ('l0: is a symbolic link, not read', 'and 2 more')
    """
    shown = [reason_text(p, lang) for p in problems[:NOTE_ITEMS]]
    if len(problems) > NOTE_ITEMS:
        shown.append(say("note_more", lang, more=len(problems) - NOTE_ITEMS))
    return "; ".join(shown)


def _exercise_header(course: Course, ex_id: str, lang: str) -> dict:
    ex = course.exercise(ex_id)
    return {"id": ex.id, "title": ex.title(lang), "max_score": ex.points}


def write_gradebook(out: Path, book: dict) -> None:
    """results.json and grades.csv, written together (grader.model.files.write_together): a disk
    that fills changes neither, and a kill -9 between them leaves grades.csv missing, never an
    older grades.csv beside a newer results.json (a rerun writes both)."""
    write_together([(Path(out) / "results.json", json.dumps(book, ensure_ascii=False, indent=1) + "\n"),
                    (Path(out) / "grades.csv", grades_csv(book))])


def grades_csv(book: dict) -> str:
    ids = [e["id"] for e in book["exercises"]]
    buffer = io.StringIO()
    # CRLF rows (RFC 4180, the csv module's default): the writer quotes a field holding any
    # character of the row end, so a name or note with a bare "\r" stays one cell of one row.
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([HEADER_NAME, *ids, "total", "max", "note", "review"])
    writer.writerow([MAX_ROW, *[e["max_score"] for e in book["exercises"]],
                     sum(e["max_score"] for e in book["exercises"]), "", "", ""])
    for name, result in book["students"].items():
        scores = {e["id"]: e["score"] for e in result["exercises"]}
        review = result.get("review") if isinstance(result.get("review"), dict) else {}
        reasons = [r for r in review.get("reasons") or [] if isinstance(r, str)]
        writer.writerow([safe_cell(name), *[scores.get(i, 0) for i in ids], result["score"], result["max_score"],
                         safe_cell(result.get("note") or ""), safe_cell("; ".join(reasons))])
    return buffer.getvalue()


def roster_digest(names) -> str:
    """Who the cohort held when a shard was cut: sha256 of every student's name, in order
    (recorded in each shard's gradebook; `grade merge` checks the merged students against it).

    >>> roster_digest(["bob", "alice"]) == roster_digest(["alice", "bob"])
    True
    """
    digest = hashlib.sha256(b"roster-v1")
    for name in sorted(names):
        digest.update(b"\0" + name.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def merge_gradebooks(folders: list[Path], out: Path) -> dict:
    """Join the results.json of a cohort's shards (`grade batch --shard k/n`, k = 1 … n).

    Refused (OutError), nothing written: gradebooks with other exercises, points or language
    (their headers), a shard missing or given twice, shards cut differently, a student in two
    of them, a student's row that does not add up to the headers, or students other than the
    cohort the shards were cut from (another cohort, or it changed between their runs).
    """
    headers, shards, books, cohorts = None, [], [], set()
    for folder in folders:
        try:
            book = json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
            exercises, students = book["exercises"], book["students"]
            if not (isinstance(exercises, list) and all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                                        and _points(e.get("max_score")) for e in exercises)
                    and isinstance(students, dict)):
                raise ValueError("headers")
            shard = book.get("shard")
            if shard is not None and not (isinstance(shard, dict) and all(_points(shard.get(k)) for k in
                                                                           ("index", "count", "cohort"))
                                          and isinstance(shard.get("roster"), str)):
                raise ValueError("shard")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
            raise OutError(f"{folder}: results.json 无法读取 / cannot be read ({type(err).__name__})") from None
        if headers is None:
            headers = exercises
        elif exercises != headers:
            raise OutError(f"{folder}: 练习、分值或语言与 {folders[0]} 不同 / graded other exercises, points or "
                           f"language than {folders[0]}")
        if shard is not None:
            shards.append((shard["index"], shard["count"], shard["cohort"], shard["roster"], folder))
        cohorts.add(held_cohort(Path(folder)))
        books.append((folder, students))
    _check_shards(shards, len(folders))
    expected = {e["id"]: e["max_score"] for e in headers or []}
    merged = {}
    for folder, students in books:
        for name, result in students.items():
            fixed = recompute(result, list(expected))
            if fixed is None or not isinstance(result.get("note", ""), str) or not _review_ok(result.get("review")) \
                    or {e["id"]: e["max_score"] for e in fixed["exercises"]} != expected:
                raise OutError(f"{folder}: {name}: 结果不完整 / the result is malformed")
            if name in merged:
                raise OutError(f"{folder}: {name} 也在另一个分片里 / is in another shard's gradebook too: "
                               f"not shards of one run")
            merged[name] = {**fixed, "note": result.get("note", "")}
    if shards and roster_digest(merged) != shards[0][3]:
        raise OutError(f"合并后的 {len(merged)} 名学生不是分片评分时提交目录里的学生（另一批提交，或期间提交目录变了？）/ "
                       f"the {len(merged)} students merged are not the cohort the shards were cut from (another "
                       f"cohort, or it changed between their runs: grade them again)")
    whole = {"shard": {"index": 1, "count": 1, "cohort": len(merged), "roster": shards[0][3]}} if shards else {}
    book = {"version": STATE_VERSION, "exercises": headers or [], **whole,
            "students": {name: merged[name] for name in sorted(merged)}}
    cohorts.discard(None)
    with hold_out(out, cohort=Path(cohorts.pop()) if len(cohorts) == 1 else None):  # as the shards' OUT: never
        write_gradebook(out, book)  # taken for a student by a batch of that cohort (`grade merge --out DIR/all`)
    return book


def _review_ok(review) -> bool:
    """A row's review mark as the batch writes it (a mark whose reasons are not text would be lost)."""
    return review is None or (isinstance(review, dict) and isinstance(review.get("flagged", False), bool)
                              and isinstance(review.get("reasons", []), list)
                              and all(isinstance(r, str) for r in review.get("reasons", [])))


def _check_shards(shards: list[tuple[int, int, int, str, Path]], given: int) -> None:
    """Every shard of one cut, once each (see merge_gradebooks)."""
    if not shards:
        return  # gradebooks from before shards were recorded: nothing to check them against
    if len(shards) != given:
        raise OutError("有的成绩册没有分片记录 / some gradebooks record no shard (made by an older kit)")
    if len({(count, cohort, roster) for _, count, cohort, roster, _ in shards}) != 1:
        raise OutError("分片不是同一批提交的同一种切分（另一批提交，或期间提交目录变了？）/ the shards were cut "
                       "differently, or from different cohorts (or the cohort changed between their runs): " +
                       ", ".join(f"{folder} ({index}/{count})" for index, count, _, _, folder in shards))
    count = shards[0][1]
    indexes = sorted(index for index, *_ in shards)
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    repeated = sorted({i for i in indexes if indexes.count(i) > 1})
    if missing or repeated:
        said = [f"缺少 / missing {', '.join(f'{i}/{count}' for i in missing)}"] if missing else []
        said += [f"重复 / given twice {', '.join(f'{i}/{count}' for i in repeated)}"] if repeated else []
        raise OutError("分片不全 / not every shard once: " + "; ".join(said))
