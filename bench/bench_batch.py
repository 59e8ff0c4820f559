"""Benchmark: `grade batch` on N chapter-5 submissions vs one bare `python -c "import torch"` each.

    python bench/bench_batch.py [-n 20] [-j 2] [--full] [--keep DIR]

Both are measured in the same run, one after the other, on the same machine, so the
ratio is meaningful even when the machine is busy (the absolute numbers are not).

1. N copies of the reference chapter-5 exercises (ex01-ex05), each in its own student
   folder, graded with `grade batch DIR --out OUT -j J --only ch05` (a fresh process:
   start-up, zygote, judges, all students, gradebook).
2. N times `python -c "import torch"`, one after the other: what a grader that starts a
   fresh interpreter per submission pays before running a single check.

ratio = (1) / (2); the target is <= 0.5, with `--only ch05` and without it (the
exercises a chapter-5 submission does not contain are skipped without starting a worker).

With --full it also grades 1 and N submissions of the whole course (ex01-ex13, including
ex12's training) and compares the cost of each further submission, (T(N) - T(1)) / (N - 1),
and the whole run's cost per submission, with one bare run of the
reference training (`solutions/ex12_train_bigram.py`'s train_bigram at the lesson's
settings, via the ex12 probe's own inputs, in a fresh interpreter).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
GRADE = [PY, "-c", "from grader.commands.main import entry; entry()"]


def make_cohort(folder: Path, n: int, pattern: str) -> None:
    for i in range(n):
        student = folder / f"student{i:03d}"
        student.mkdir(parents=True)
        for path in sorted((ROOT / "solutions").glob(pattern)):
            shutil.copy(path, student / path.name)


def timed(cmd, **kw) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.perf_counter() - start


def bench_batch(n: int, jobs: int, only: str | None, pattern: str, keep: Path | None) -> float:
    work = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        make_cohort(work / "cohort", n, pattern)
        cmd = GRADE + ["batch", str(work / "cohort"), "--out", str(work / "out"), "-j", str(jobs), "--no-progress"]
        if only:
            cmd += ["--only", only]
        seconds = timed(cmd, cwd=ROOT)
        if keep:
            shutil.copytree(work / "out", keep, dirs_exist_ok=True)
        return seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_imports(n: int) -> float:
    return sum(timed([PY, "-c", "import torch"]) for _ in range(n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="submissions (default 20)")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel judges (default: CPUs)")
    parser.add_argument("--full", action="store_true", help="also the whole course against the reference training")
    parser.add_argument("--keep", type=Path, default=None, help="copy the chapter-5 gradebook here")
    args = parser.parse_args()

    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; torch threads 1; -j {args.j}")
    one = bench_batch(1, args.j, "ch05", "ex0[1-5]_*.py", None)
    batch = bench_batch(args.n, args.j, "ch05", "ex0[1-5]_*.py", args.keep)
    bare = bench_imports(args.n)
    t_import = bare / args.n
    marginal = (batch - one) / (args.n - 1) if args.n > 1 else batch
    print(f"chapter 5: grade batch, {args.n} submissions {batch:.2f} s ({batch / args.n * 1000:.0f} ms each); "
          f"1 submission {one:.2f} s (start-up); each further submission {marginal * 1000:.0f} ms")
    print(f"{args.n} x `python -c 'import torch'`: {bare:.2f} s ({t_import * 1000:.0f} ms each)")
    print(f"ratio, whole run:          {batch / bare:.3f}  (grade batch {args.n} / {args.n} bare imports; target <= 0.5)")
    print(f"ratio, per submission:     {marginal / t_import:.3f}  (one more submission / one bare import)")
    # The same chapter-5 cohort without --only: the eight bigram exercises they do not hold
    # must cost next to nothing (skipped without a worker).
    default = bench_batch(args.n, args.j, None, "ex0[1-5]_*.py", None)
    print(f"chapter 5 without --only: {default:.2f} s; ratio, whole run: {default / bare:.3f} (target <= 0.5)")
    if args.full:
        one = bench_batch(1, args.j, None, "ex*.py", None)
        full = bench_batch(args.n, args.j, None, "ex*.py", None)
        training = timed([PY, str(Path(__file__).parent / "reference_training.py")], cwd=ROOT)
        further = (full - one) / max(1, args.n - 1)
        print(f"whole course, {args.n} submissions: {full:.2f} s ({full / args.n:.2f} s each, the reference's "
              f"answers computed once per OUT included); 1 submission: {one:.2f} s; each further submission "
              f"{further:.2f} s; one bare run of the reference training (fresh interpreter): {training:.2f} s")
        print(f"per submission / training: {further / training:.2f} (each further submission; target <= 1.2); "
              f"whole run / N / training: {full / args.n / training:.2f}")


if __name__ == "__main__":
    main()
