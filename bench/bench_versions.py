"""Benchmark: this tree against an earlier commit, alternating, on the same chapter-5 cohort.

    python bench/bench_versions.py REV [-n 40] [-r 6]

A change meant to make `grade batch` cheaper is measured against the commit before it, not
against a figure from another day: this machine's bare `import torch` has taken anywhere
from 1.5 s to 3.4 s. REV is checked out into a temporary worktree (`git worktree add
--detach`, removed at the end); then, R rounds, each in turn: REV's `grade batch` on 1 and
on N copies of the reference chapter-5 exercises (`--only ch05`, `-j` the CPUs), this tree's
the same, and a bare `python -c "import torch"`. Both versions run with this environment's
interpreter and packages (REV's grader first on the path), from their own folders (their
own course.toml, checks and solutions).

Printed: per version, the medians of the wall time and of the CPU of every process the run
started, for 1 and for N submissions, the whole-run ratio against N bare imports (issue 11's
figure) and the lower quartile of the N-submission runs (the least disturbed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_batch import ROOT, make_cohort, timed  # noqa: E402
from bench_floor import children_cpu  # noqa: E402

PY = sys.executable
ENTRY = [PY, "-c", "from grader.commands.main import entry; entry()"]


def run_cpu(cmd, **kw) -> tuple[float, float]:
    """(wall, CPU of every process it started) of one command."""
    before = children_cpu()
    wall = timed(cmd, **kw)
    return wall, children_cpu() - before


def grade_batch(tree: Path, cohort: Path, out: Path, jobs: int) -> tuple[float, float]:
    """`grade batch` of the grader in `tree`, from `tree` (its course), into a fresh `out`."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return run_cpu(ENTRY + ["batch", str(cohort), "--out", str(out), "-j", str(jobs), "--no-progress",
                            "--only", "ch05"], cwd=tree, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare with (any git revision)")
    parser.add_argument("-n", type=int, default=40, help="submissions (default 40)")
    parser.add_argument("-r", type=int, default=6, help="rounds (default 6)")
    args = parser.parse_args()
    jobs = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="bench-versions-"))
    old = work / "old"
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), args.rev], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cohorts = {1: work / "one", args.n: work / "many"}
        for n, folder in cohorts.items():
            make_cohort(folder, n, "ex0[1-5]_*.py")
        trees = {args.rev: old, "this tree": ROOT}
        runs: dict[tuple[str, int], list[tuple[float, float]]] = {(name, n): [] for name in trees for n in cohorts}
        bare: list[float] = []
        print(f"machine: {jobs} CPUs, load average {os.getloadavg()[0]:.2f}; {args.r} rounds, -j {jobs}")
        for _ in range(args.r):
            for name, tree in trees.items():
                for n, folder in cohorts.items():
                    runs[name, n].append(grade_batch(tree, folder, work / "out", jobs))
            bare.append(run_cpu([PY, "-c", "import torch"])[0])
        t_import = statistics.median(bare)
        print(f"bare `python -c 'import torch'`: {t_import:.2f} s (median of {len(bare)})")
        for name in trees:
            one, many = runs[name, 1], runs[name, args.n]
            walls = sorted(w for w, _ in many)
            print(f"{name:>12}: 1 submission {statistics.median(w for w, _ in one):.2f} s wall, "
                  f"{statistics.median(c for _, c in one):.2f} s CPU; {args.n}: "
                  f"{statistics.median(walls):.2f} s wall (lower quartile {walls[len(walls) // 4]:.2f}), "
                  f"{statistics.median(c for _, c in many):.2f} s CPU; ratio, whole run "
                  f"{statistics.median(walls) / (args.n * t_import):.3f}")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
