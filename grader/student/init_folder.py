"""`grade init DIR`: a student's working folder from the installed kit, as `rustlings init` does.

The kit installed from its wheel carries the stubs (grader/_kit/exercises); `init` copies
them into `DIR/exercises/` with a short README, so that `cd DIR && grade ex01` grades the
student's own files. Only the stubs are written: never a solution, never a check.

Example: `grade init gpt-exercises` -> gpt-exercises/exercises/ex01_windows.py … ex13_bpe.py,
gpt-exercises/README.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from grader.model.course import Course

README = """# {title_zh} / {title_en}

在 `exercises/` 里填写每个练习，然后在这个目录里运行 / Fill in each file in `exercises/`, then run here:

    grade list         # 所有练习 / every exercise
    grade ex01         # 检查一个练习 / check one exercise
    grade hint ex01    # 下一级提示 / the next hint
    grade all          # 检查全部 / check them all
"""


def init_folder(course: Course, out: Path) -> Path:
    """Write the stubs into `out/exercises/` (a new or empty folder); returns `out`."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise click.UsageError(f"{out} 已存在且不是空目录 / exists and is not an empty folder")
    (out / "exercises").mkdir(parents=True, exist_ok=True)
    for ex in course.exercises:
        shutil.copyfile(course.exercises_dir / ex.file, out / "exercises" / ex.file)
    (out / "README.md").write_text(README.format(title_zh=course.title.zh, title_en=course.title.en),
                                   encoding="utf-8")
    (out / ".gitignore").write_text(".grade/\n.grade-state.json\n__pycache__/\n", encoding="utf-8")
    return out
