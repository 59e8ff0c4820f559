"""Cohorts to grade and the `grade batch` that grades them, as the cohort tests build them.

`cohort(folder, n)` is n students of the cut course (tests.kit.make_course): every third honest,
every third wrong, every third the stub; `ch05_cohort(folder)` is chapter 5 of the real course
handed in by five students (correct, stub, two with the same diagnosed bug, a copier), one under
a hostile folder name.

    >>> folder = cohort(tmp_path / "cohort", 3)                      # doctest: +SKIP
    >>> batch(course, folder, tmp_path / "out", "-j", "2").returncode  # doctest: +SKIP
    0
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.kit import EX01, EX02, GRADE, KIT, WRONG
from tests.in_process import grade


def cohort(folder: Path, n: int, slow: float = 0.0) -> Path:
    """n students: every third honest, every third wrong, every third the stub."""
    for i in range(n):
        student = folder / f"s{i:02d}"
        student.mkdir(parents=True)
        kind = i % 3
        ex01 = (KIT / "solutions" / EX01).read_text(encoding="utf-8") if kind == 0 else (
            WRONG if kind == 1 else (KIT / "exercises" / EX01).read_text(encoding="utf-8"))
        if slow:
            ex01 = f"import time\ntime.sleep({slow})\n" + ex01
        (student / EX01).write_text(ex01, encoding="utf-8")
        src = KIT / ("solutions" if kind == 0 else "exercises") / EX02
        (student / EX02).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def batch(course: Path, folder: Path, out: Path, *extra: str, **kw):
    """`grade batch FOLDER --out OUT EXTRA` in a fresh interpreter; one judge unless EXTRA says
    `-j` (each judge's sandbox is an interpreter importing torch, whatever the cohort's size)."""
    jobs = [] if {"-j", "--jobs"} & set(extra) else ["-j", "1"]
    return subprocess.run(GRADE + ["--course", str(course), "batch", str(folder), "--out", str(out),
                                   "--no-progress", *jobs, *extra], capture_output=True, text=True, timeout=600, **kw)


CH05 = ("ex01_windows.py", "ex02_nll.py", "ex03_param_budget.py", "ex04_parallel_vs_generate.py",
        "ex05_tinygpt_loss.py")
HOSTILE = "<img src=x onerror=alert(1)>"

# ex01 written independently of solutions/, with the classic off-by-one: range() stops one
# start too early, so the last full window is lost (MISTAKES off_by_one_drop_last in grader/per_exercise/ex01/checks.py)
BUGGY_EX01 = '''
def shift_pairs(tokens):
    if len(tokens) < 2:
        raise ValueError("need two tokens")
    return tokens[:-1], tokens[1:]


def make_windows(tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("bad sizes")
    out = []
    for start in range(0, len(tokens) - block_size - 1, stride):
        x = tokens[start:start + block_size]
        y = tokens[start + 1:start + block_size + 1]
        out.append((x, y))
    return out


def count_targets(n_tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("bad sizes")
    return len(make_windows(list(range(n_tokens)), block_size, stride)) * block_size
'''

# the same file "made one's own": other names, other messages, comments added
COPIED_EX01 = '''
def shift_pairs(seq):
    # inputs and targets
    if len(seq) < 2:
        raise ValueError("sequence too short")
    return seq[:-1], seq[1:]


def make_windows(seq, size, step=1):
    # every window of the sequence
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    result = []
    for i in range(0, len(seq) - size - 1, step):
        inp = seq[i:i + size]
        tgt = seq[i + 1:i + size + 1]
        result.append((inp, tgt))
    return result


def count_targets(n, size, step=1):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    return len(make_windows(list(range(n)), size, step)) * size
'''


def ch05_cohort(folder: Path) -> Path:
    """good (solutions), stub, buggy and copier (ex01 off by one; buggy's ex05 flattens with
    view(V, B*T)), and a student whose folder name is markup, who handed in buggy's ex01."""
    stubs = {name: (KIT / "exercises" / name).read_text(encoding="utf-8") for name in CH05}
    solved = {name: (KIT / "solutions" / name).read_text(encoding="utf-8") for name in CH05}
    wrong_ex05 = solved["ex05_tinygpt_loss.py"].replace(
        "flat_logits = logits.view(B * T, V)  # (B*T, V)", "flat_logits = logits.reshape(V, B * T).t()", 1)
    assert wrong_ex05 != solved["ex05_tinygpt_loss.py"]
    students = {
        "good": solved,
        "stub": stubs,
        "buggy": {**stubs, "ex01_windows.py": BUGGY_EX01, "ex05_tinygpt_loss.py": wrong_ex05},
        "copier": {**stubs, "ex01_windows.py": COPIED_EX01},
        HOSTILE: {**stubs, "ex01_windows.py": BUGGY_EX01},
    }
    for name, files in students.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text, encoding="utf-8")
    return folder


def batch_here(course: Path, folder: Path, out: Path | str, *extra: str) -> subprocess.CompletedProcess:
    """`batch` run in this process (tests.in_process), where a fresh interpreter proves nothing
    more: a run refused before anyone is graded, or a gradebook read from OUT (the judges are
    real processes either way, and so are their sandboxes unless the test takes the runner
    double, tests.runner_double). Shaped as `batch`'s answer, its stderr the
    batch's own (not its judges'); an exception the command let out is raised, as a real run
    would print its traceback. One judge unless EXTRA says `-j`, as `batch`.

        >>> batch_here(course, folder, folder).returncode   # doctest: +SKIP  (OUT is DIR: refused)
        2
    """
    jobs = [] if {"-j", "--jobs"} & set(extra) else ["-j", "1"]
    return grade("--course", str(course), "batch", str(folder), "--out", str(out), "--no-progress", *jobs, *extra)
