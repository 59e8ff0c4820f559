"""How fast does `grade watch` re-grade after a save? (issue 6: target ≤ 0.3 s on two cores)

    .venv/bin/python bench/bench_watch.py [--rounds 10] [--exercise ex01] [--cores 2] [--mode fork|spawn|both]

Two measurements, printed, never asserted:

1. end to end: `grade watch EX` runs in a pseudo-terminal on a copy of the exercise
   folder; the file is saved (alternately a wrong and a right answer, both from the
   reference with one known mistake) and the clock stops when the new report's last line
   ("graded in … s") appears on the terminal. This includes watchfiles noticing the save.
2. in process: `WatchSession.grade(EX)` alone, for each exercise given with --also,
   graded on the reference solutions (the checks' own cost, with torch, the zygote and
   the references warm).

The process (and so `grade watch`) is pinned to the first `--cores` CPUs.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A wrong answer: the reference with the exercise's first known mistake swapped in by text.
WRONG = {
    "ex01": ("while i + block_size + 1 <= len(tokens):", "while i + block_size + 1 < len(tokens):"),
}


def read_until(fd: int, pattern: str, timeout: float, seen: bytearray) -> float:
    """Read the terminal until `pattern` appears after what was `seen`; the time it appeared."""
    start = len(seen)
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if regex.search(seen[start:].decode("utf-8", "ignore")):
                return time.monotonic()
    raise TimeoutError(f"{pattern!r} did not appear within {timeout} s; last output:\n"
                       + seen[-2000:].decode("utf-8", "ignore"))


def end_to_end(exercise: str, rounds: int, pause: float = 0.3) -> list[tuple[float, float]]:
    """(seconds from save to report on screen, seconds the watch itself says it graded)."""
    from grader.model.course import load_course

    course = load_course()
    ex = course.exercise(exercise)
    right = (course.solutions_dir / ex.file).read_text(encoding="utf-8")
    old, new = WRONG.get(exercise, ("", ""))
    wrong = right.replace(old, new) if old else right + "\n# saved again\n"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "exercises"
        shutil.copytree(course.exercises_dir, folder, ignore=shutil.ignore_patterns(".grade*", "__pycache__"))
        argv = [sys.executable, "-c", "from grader.commands.main import entry; entry()", "--lang", "en", "watch", exercise,
                "--submission", str(folder), "--no-color"]
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(tmp)
            os.execv(sys.executable, argv)
        seen = bytearray()
        times = []
        try:
            read_until(fd, r"graded in [0-9.]+ s", 120, seen)
            for i in range(rounds):
                time.sleep(pause)  # let the previous report settle (a student edits for longer)
                text = wrong if i % 2 == 0 else right
                mark = len(seen)
                saved = time.monotonic()
                (folder / ex.file).write_text(text, encoding="utf-8")
                shown = read_until(fd, r"graded in ([0-9.]+) s", 60, seen)
                said = float(re.findall(r"graded in ([0-9.]+) s", seen[mark:].decode("utf-8", "ignore"))[-1])
                times.append((shown - saved, said))
            os.write(fd, b"q")
            read_until(fd, r"left grade watch", 10, seen)
        finally:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(fd)
    return times


def in_process(exercises: list[str], rounds: int) -> dict[str, list[float]]:
    from grader.model.course import load_course
    from grader.student.watch import WatchSession

    course = load_course()
    session = WatchSession(course, course.solutions_dir, "en").start()
    out = {}
    try:
        for ex_id in exercises:
            session.grade(ex_id)  # first grade: imports, reference answers
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                session.grade(ex_id)
                times.append(time.perf_counter() - started)
            out[ex_id] = times
    finally:
        session.close()
    return out


def summary(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.3f} s  min {min(xs):.3f} s  max {max(xs):.3f} s  (n={len(xs)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="ex01")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--also", nargs="*", default=["ex01", "ex06", "ex07", "ex08", "ex09", "ex10"],
                        help="exercises to time in process")
    parser.add_argument("--pause", type=float, default=0.3,
                        help="seconds between a report and the next save (spawned workers start in the pause)")
    parser.add_argument("--mode", choices=["fork", "spawn", "both"], default="both",
                        help="how workers start (GRADE_WORKER: forked, or fresh interpreters as on Windows/macOS)")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, set(cpus[: args.cores]))
    print(f"CPUs: {len(cpus)} available, pinned to {sorted(os.sched_getaffinity(0))}")
    for mode in (["fork", "spawn"] if args.mode == "both" else [args.mode]):
        os.environ["GRADE_WORKER"] = mode
        print(f"\n===== workers: {mode}")
        measure(args)


def measure(args) -> None:
    results = end_to_end(args.exercise, args.rounds, args.pause)
    print(f"\nend to end, save -> report on screen ({args.exercise}, grade watch in a pty):")
    for n, (shown, said) in enumerate(results):
        print(f"  save {n + 1:>2} ({'wrong' if n % 2 == 0 else 'right'}): {shown:.3f} s on screen, "
              f"{said:.2f} s grading")
    print("  " + summary([s for s, _ in results]))
    print("  target ≤ 0.300 s: " + ("met" if statistics.median([s for s, _ in results]) <= 0.3 else "NOT met"))
    course_ids = [e for e in args.also]
    from grader.model.course import load_course

    known = {e.id for e in load_course().exercises}
    course_ids = [e for e in course_ids if e in known]
    print("\nin process, WatchSession.grade on the reference solutions (warm):")
    for ex_id, times in in_process(course_ids, max(3, args.rounds // 2)).items():
        print(f"  {ex_id}: {summary(times)}")


if __name__ == "__main__":
    main()
