"""A scratch copy of the instructor's kit, graded the way an author grades it: `grade` run in a
subprocess whose `grader` package is the copy's own, and the authoring guide's worked example
written into it.

    kit = copy_kit(ROOT, tmp / "kit")
    grade(kit, "new", "ex14", "--assignment", "attention", "--name", "tril_average")
    fill_from_guide(kit, "ex14")          # the guide's reference, checks, mistakes, hints, course table

Used by tests/build/test_authoring.py; a module of its own, so that no test module imports
another (each test file stays on its own under pytest-xdist).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

GUIDE = Path("docs") / "instructors" / "authoring.md"
KIT_FOLDERS = ("grader", "exercises", "solutions", "datasets")
KIT_FILES = ("course.toml", "pyproject.toml")
GUIDE_ID = "ex14"  # the exercise id the guide's worked example is written with


def copy_kit(root: Path, kit: Path) -> Path:
    """The kit's course files in `kit` (no bytecode): what `grade` needs to run from there."""
    for name in KIT_FOLDERS:
        shutil.copytree(root / name, kit / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in KIT_FILES:
        shutil.copy2(root / name, kit / name)
    return kit


def grade(kit: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """`grade ARGS` run in `kit` with the copy's own grader package, in English."""
    env = {**os.environ, "PYTHONPATH": str(kit), "GRADE_LANG": "en"}
    return subprocess.run([sys.executable, "-c", "from grader.commands.main import entry; entry()", *args],
                          cwd=kit, env=env, capture_output=True, text=True, timeout=timeout)


def next_exercise_id(kit: Path) -> str:
    """The first exercise id past the course's last: a scratch id no course fact names."""
    exercises = tomllib.loads((kit / "course.toml").read_text(encoding="utf-8"))["exercises"]
    last = max(int(re.fullmatch(r"ex(\d+)", t["id"]).group(1)) for t in exercises)
    return f"ex{last + 1:02d}"


def guide_blocks(root: Path) -> dict[str, list[str]]:
    """The guide's Python and TOML blocks, by the number of the heading they stand under
    ("2" for "## 2. The course table")."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt().parse((root / GUIDE).read_text(encoding="utf-8"))
    blocks: dict[str, list[str]] = {}
    heading = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = tokens[i + 1].content.partition(".")[0]
        elif token.type == "fence" and token.info in ("python", "toml"):
            blocks.setdefault(heading, []).append(token.content)
    return blocks


def fill_from_guide(root: Path, kit: Path, exercise_id: str) -> None:
    """Replace what `grade new exercise_id --name tril_average` wrote with the guide's worked
    example (sections 2 to 6), its id written as `exercise_id`; the stub is left as it was (the
    guide writes it with `grade check --write-stubs`)."""
    import tomlkit

    blocks = {k: [b.replace(GUIDE_ID, exercise_id) for b in v] for k, v in guide_blocks(root).items()}
    table = tomllib.loads(blocks["2"][0])
    reference_file = table["exercises"][0]["file"]
    unit = kit / "grader" / "per_exercise" / exercise_id
    (kit / "solutions" / reference_file).write_text(blocks["3"][0], encoding="utf-8")
    (unit / "checks.py").write_text(blocks["4"][0] + "\n\n" + blocks["5"][0], encoding="utf-8")
    (unit / "hints.toml").write_text(blocks["6"][0], encoding="utf-8")
    course = tomlkit.parse((kit / "course.toml").read_text(encoding="utf-8"))
    for kind in ("assignments", "exercises"):
        for written in table[kind]:
            target = next(t for t in course[kind] if t["id"] == written["id"])
            for key, value in written.items():
                target[key] = _toml_value(value)
    (kit / "course.toml").write_text(tomlkit.dumps(course), encoding="utf-8")


def _toml_value(value):
    """A course.toml value as tomlkit writes it on one line (`title = { zh = …, en = … }`)."""
    import tomlkit

    if isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update(value)
        return table
    return value


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one `old` in `path` with `new` (an author's edit; `old` must be there)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
