"""Benchmark: `grade ex03` (the reference, a student's everyday command) vs `python -c "import torch"`.

    python bench/bench_startup.py [-r 7]

The two are run alternately, r times each, in the same run; the medians are compared.
Target: ratio <= 1.2 (grading one exercise costs little more than starting torch).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def timed(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", type=int, default=7, help="repetitions of each (default 7)")
    parser.add_argument("--exercise", default="ex03")
    args = parser.parse_args()
    grade = [str(Path(PY).parent / "grade"), args.exercise, "--reference"]
    bare = [PY, "-c", "import torch"]
    timed(grade)  # warm the disk cache and the reference answers
    g, b = [], []
    for _ in range(args.r):
        b.append(timed(bare))
        g.append(timed(grade))
    mg, mb = statistics.median(g), statistics.median(b)
    print(f"grade {args.exercise} --reference: median {mg:.2f} s; python -c 'import torch': median {mb:.2f} s; "
          f"ratio {mg / mb:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
