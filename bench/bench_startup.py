"""Benchmark: `grade exNN` as a student runs it, on an untouched stub and on a full answer, against
a bare `python -c "import torch"`, measured side by side.

    python bench/bench_startup.py [-r 7] [--exercise ex01] [--mode fork|spawn|both] [--busy 1]

Each round runs the three commands in turn (bare import, grade on the stub, grade on the full
answer), so a busy machine slows all three alike; the medians are compared. Target: both
ratios <= 1.2 (grading one exercise costs little more than starting torch). The submissions
are copies in a temporary folder (the stub from exercises/, the answer from solutions/), each in
an `exercises/` folder graded as a student grades it (`grade exNN` there: the practice tier).
`--busy N` keeps N cores busy with spinning processes for the whole run (a laptop or CI runner
doing something else). `--mode both` (the default) times each
grade twice per round, with workers forked from the zygote and with fresh interpreters started
ahead of need (GRADE_WORKER=spawn, what Windows and macOS use), side by side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def timed(cmd, cwd, mode: str | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "GRADE_LANG": "en", **({"GRADE_WORKER": mode} if mode else {})})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--exercise", default="ex01")
    parser.add_argument("--mode", choices=["fork", "spawn", "both"], default="both",
                        help="how workers start (GRADE_WORKER); both: side by side")
    parser.add_argument("--busy", type=int, default=0, help="cores kept busy meanwhile (default 0)")
    args = parser.parse_args()
    spinners = [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        run(args)
    finally:
        for spinner in spinners:
            spinner.kill()


def run(args) -> None:
    modes = ["fork", "spawn"] if args.mode == "both" else [args.mode]
    sys.path.insert(0, str(ROOT))
    from grader.model.course import load_course

    ex = load_course().exercise(args.exercise)
    grade_exe = str(Path(PY).parent / "grade")
    with tempfile.TemporaryDirectory() as tmp:
        stub, answer = Path(tmp) / "stub", Path(tmp) / "answer"
        for folder, source in ((stub, ROOT / "exercises"), (answer, ROOT / "solutions")):
            (folder / "exercises").mkdir(parents=True)
            shutil.copy(source / ex.file, folder / "exercises")
        runs = {"python -c 'import torch'": ([PY, "-c", "import torch"], None, tmp)}
        for mode in modes:
            runs[f"grade {ex.id} (stub, {mode})"] = ([grade_exe, ex.id], mode, stub)
            runs[f"grade {ex.id} (full answer, {mode})"] = ([grade_exe, ex.id], mode, answer)
        for cmd, mode, cwd in runs.values():  # warm the disk cache and the recorded reference answers
            timed(cmd, cwd, mode)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.r):
            for name, (cmd, mode, cwd) in runs.items():
                times[name].append(timed(cmd, cwd, mode))
    medians = {name: statistics.median(t) for name, t in times.items()}
    bare = medians["python -c 'import torch'"]
    print(f"{args.r} rounds, {args.busy} core(s) kept busy, medians (min–max):")
    for name, median in medians.items():
        ratio = "" if median is bare else f"  ratio {median / bare:.2f} (target <= 1.2)"
        print(f"  {name:40} {median:5.2f} s ({min(times[name]):.2f}–{max(times[name]):.2f}){ratio}")
    if len(modes) == 2:
        for what in ("stub", "full answer"):
            fork, spawn = (medians[f"grade {ex.id} ({what}, {mode})"] for mode in modes)
            print(f"  spawn / fork, {what}: {spawn / fork:.2f}")


if __name__ == "__main__":
    main()
