"""Benchmark: what the test suite costs, counted in bare torch imports, and how much of it goes to
starting fresh interpreters.

    python bench/bench_suite.py [-r 5] [--cores 2] [--minutes 5] [-- PYTEST_ARGS ...]

Runs the README's test command (`python -m pytest -n auto --dist loadfile`, or `PYTEST_ARGS`)
once, between two sets of `r` bare `python -c "import torch"` runs (the median of their CPU is
the unit), and while it runs reads, Linux only:

- the machine's CPU time, every core, from /proc/stat (run it on an otherwise quiet machine:
  other work is counted too), less this script's own;
- every process started meanwhile that exec'd a Python interpreter (its command line is not its
  parent's: a forked child keeps its parent's), found by polling /proc; among them, those that
  loaded torch (`libtorch_cpu` in their memory map). A torch import takes seconds, so the
  polling misses none of those.

It prints the suite's CPU in bare imports, the fresh interpreters by kind (`grade` and `grade
batch`, a sandbox's zygote, a spawned worker, a notebook kernel, pytest and its workers, other)
and about what their torch imports cost (count x one bare import), beside the CPU of `--minutes`
minutes on `--cores` cores: a suite costing more than that cannot finish in that time on such a
machine, however its tests are spread.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_batch import ROOT  # noqa: E402
from bench_floor import own_cpu  # noqa: E402
from bench_versions import PY, run_cpu  # noqa: E402

README_TESTS = ["-m", "pytest", "-n", "auto", "--dist", "loadfile", "-q", "-p", "no:cacheprovider"]
POLL_SECONDS = 0.05


def machine_busy_seconds() -> float:
    """CPU seconds every core has spent on anything but idling, since boot (steal excluded)."""
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in Path("/proc/stat").read_text().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def bare_import_seconds() -> float:
    """The CPU of one fresh `python -c "import torch"` (a waited-for child: its rusage is whole)."""
    return run_cpu([PY, "-c", "import torch"])[1]


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as file:
            return file.read().decode(errors="replace")
    except OSError:
        return None


def _parent(pid: str) -> str | None:
    stat = _read(f"/proc/{pid}/stat")
    return stat.rsplit(")", 1)[1].split()[1] if stat else None


def kind_of(cmdline: str) -> str:
    """What a fresh interpreter is, read from its command line (arguments split by NUL).

        >>> kind_of("/venv/bin/python\\0/venv/bin/grade\\0batch\\0submitted/")
        'grade'
    """
    argv = cmdline.split("\0")
    if "grader.sandbox.zygote_main" in argv:
        return "sandbox zygote"
    if "grader.sandbox.spawn" in cmdline:
        return "spawned worker"
    if any("ipykernel" in arg for arg in argv):
        return "notebook kernel"
    if "sys.stdin.readline" in cmdline or argv[1:3] == ["-m", "pytest"]:  # execnet starts xdist's workers so
        return "pytest and its workers"
    if any(Path(arg).name == "grade" for arg in argv[:2]) or argv[1:3] == ["-m", "grader"]:
        return "grade"
    return "other"


class FreshInterpreters:
    """Polls /proc from a thread: the processes that exec'd a Python, and which of them loaded torch."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set(self._listing())
        self.pending: dict[tuple[str, str], str] = {}  # Python interpreters not (yet) seen with torch
        self.with_torch: collections.Counter[str] = collections.Counter()
        self.without_torch: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    @staticmethod
    def _listing():
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                stat = _read(f"/proc/{pid}/stat")
                if stat:
                    yield pid, stat.rsplit(")", 1)[1].split()[19]  # (pid, start time): a pid may be reused

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._look()
            time.sleep(POLL_SECONDS)
        self._look()
        for kind in self.pending.values():  # ended before torch was seen in them
            self.without_torch[kind] += 1

    def _look(self) -> None:
        for key in self._listing():
            if key in self.seen:
                continue
            self.seen.add(key)
            cmdline, parent = _read(f"/proc/{key[0]}/cmdline"), _parent(key[0])
            parent_cmdline = _read(f"/proc/{parent}/cmdline") if parent else None
            if cmdline and "python" in Path(cmdline.split("\0", 1)[0]).name and cmdline != parent_cmdline:
                self.pending[key] = kind_of(cmdline)
        for key in list(self.pending):
            maps = _read(f"/proc/{key[0]}/maps")
            if maps is None:
                self.without_torch[self.pending.pop(key)] += 1
            elif "libtorch_cpu" in maps:
                self.with_torch[self.pending.pop(key)] += 1

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", type=int, default=5, help="bare imports before and after the suite (default 5)")
    parser.add_argument("--cores", type=int, default=2, help="cores of the budget (default 2)")
    parser.add_argument("--minutes", type=float, default=5.0, help="minutes of the budget (default 5)")
    parser.add_argument("pytest_args", nargs="*", help="instead of the README's test command's arguments")
    args = parser.parse_args()
    if not Path("/proc/stat").exists():
        sys.exit("bench_suite.py reads /proc: Linux only")

    bare = [bare_import_seconds() for _ in range(args.r)]
    busy, mine, start = machine_busy_seconds(), own_cpu(), time.monotonic()
    with FreshInterpreters() as fresh:
        suite = subprocess.run([PY, *(["-m", "pytest", *args.pytest_args] if args.pytest_args else README_TESTS)],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    suite_cpu = machine_busy_seconds() - busy - (own_cpu() - mine)
    bare += [bare_import_seconds() for _ in range(args.r)]
    unit = statistics.median(bare)

    print((suite.stdout.strip().splitlines() or ["(no output)"])[-1])
    print(f"a bare import: {unit:.2f} CPU-s (median of {len(bare)}, {min(bare):.2f}–{max(bare):.2f})")
    cores = os.cpu_count() or 1
    print(f"the suite: {wall:.0f} s on {cores} cores, {suite_cpu:.0f} CPU-s = {suite_cpu / unit:.0f} bare imports "
          f"(the cores {suite_cpu / (wall * cores):.0%} busy)")
    total = sum(fresh.with_torch.values())
    print(f"fresh interpreters that loaded torch: {total}, their imports about {total * unit:.0f} CPU-s, "
          f"{total * unit / suite_cpu:.0%} of the suite's CPU")
    for kind, count in fresh.with_torch.most_common():
        print(f"  {count:5d}  {kind}")
    print(f"  ({sum(fresh.without_torch.values())} more Python interpreters without torch)")
    budget = args.minutes * 60 * args.cores
    print(f"{args.minutes:g} min on {args.cores} cores: {budget:.0f} CPU-s = {budget / unit:.0f} bare imports; "
          f"the suite needs {suite_cpu / budget:.2f} times that")
    sys.exit(suite.returncode)


if __name__ == "__main__":
    main()
