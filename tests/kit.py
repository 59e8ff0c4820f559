"""The kit under test and a course cut from it, as the tests that run `grade` use them.

`KIT` is the checkout; `GRADE` runs its `grade` command in a fresh interpreter (this one's, so
that the worktree's `grader` is the one graded with); `make_course` writes a course.toml with a
few exercises and short time limits beside links to the kit's folders.

    >>> course = make_course(tmp_path)                  # doctest: +SKIP
    >>> subprocess.run(GRADE + ["--course", str(course), "ex01"])  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
GRADE = [sys.executable, "-c", "from grader.commands.main import entry; entry()"]
OFFICIAL = {**os.environ, "CI": "true"}  # `--submission` in CI: the official tier, as root or not
EX01 = "ex01_windows.py"
EX02 = "ex02_nll.py"

# ex01 answered wrongly everywhere: no check of it passes, every one runs
WRONG = '''
def shift_pairs(tokens):
    return [0], [0]


def make_windows(tokens, block_size, stride=1):
    return []


def count_targets(n_tokens, block_size, stride=1):
    return 0
'''


def make_course(tmp: Path, timeout: float | None = 3, exercises=("ex01", "ex02")) -> Path:
    """A course.toml with only ex01 and ex02 (or `exercises`), each check limited to `timeout`
    seconds (None: the kit's own limits), beside symlinks to the kit."""
    text = (KIT / "course.toml").read_text(encoding="utf-8")
    head, *blocks = text.split("[[exercises]]")
    keep = [b for b in blocks if re.search(rf'^id\s*=\s*"({"|".join(exercises)})"', b, re.M)]
    if timeout is not None:
        keep = [re.sub(r"^timeout\s*=\s*[\d.]+", f"timeout = {timeout}", b, flags=re.M) for b in keep]
    root = tmp / "course"
    (root / "grader").mkdir(parents=True)
    (root / "course.toml").write_text(head + "".join("[[exercises]]" + b for b in keep), encoding="utf-8")
    for name in ("exercises", "solutions"):
        (root / name).symlink_to(KIT / name)
    (root / "grader" / "per_exercise").symlink_to(KIT / "grader" / "per_exercise")
    return root / "course.toml"


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file under `folders` (bytecode caches aside) -> its sha256: what a run may not change."""
    found = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
