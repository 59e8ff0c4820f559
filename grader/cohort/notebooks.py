"""nbgrader notebooks: the exercise files in a student's submitted notebook.

    >>> extract_notebook(Path("submitted/ann/ch05/ch05.ipynb"), course)
    {'ex01_windows.py': 'import torch\\n…def shift_pairs(tokens): …'}
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from grader.cohort.capped import NOTEBOOK_CAP, read_capped
from grader.model.course import Course

_MAGIC = re.compile(r"^\s*[%!]")


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
    return "\n".join("# " + line if _MAGIC.match(line) else line for line in text.splitlines()) + "\n"


def extract_notebook(path: Path, course: Course) -> dict[str, str]:
    """The exercise files in the nbgrader notebook at `path` (see `extract_notebook_text`)."""
    data = read_capped(str(path), NOTEBOOK_CAP)
    return {} if data is None else extract_notebook_text(data, Path(path).name, course)


def extract_notebook_text(data: bytes, filename: str, course: Course) -> dict[str, str]:
    """The exercise files in an nbgrader notebook: {"ex03_param_budget.py": code}.

    A cell belongs to exercise exNN when its nbgrader `grade_id` starts with "exNN"
    (`ex03_answer`, `ex03-solution`), or, failing that, when the notebook's name does.
    An exercise's file is the notebook's code cells that are not test cells (nbgrader
    `grade` without `solution`), in order: the set-up cells (imports) and the solution
    cells of that exercise; solution cells of other exercises are left out. Lines starting
    with % or ! (IPython magics) are commented out. A notebook that is not JSON gives {}.
    """
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return {}
    by_id = {ex.id: ex for ex in course.exercises}
    name_match = re.match(r"(ex\d\d)", filename)
    cells = [c for c in notebook["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]
    tagged: list[tuple[str | None, str, dict]] = []
    for cell in cells:
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        meta = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        grade_id = str(meta.get("grade_id", ""))
        match = re.match(r"(ex\d\d)", grade_id)
        owner = match.group(1) if match else None
        if meta.get("grade") and not meta.get("solution"):
            continue  # a test cell: the grader's, not the student's
        kind = "solution" if meta.get("solution") else "setup"
        if kind == "setup" and re.search(r"^\s*(from|import)\s+grader\b", _cell_source(cell), re.MULTILINE):
            continue  # the grader's own cell (`from grader.notebook import run_check`), not needed here
        tagged.append((owner, kind, cell))
    owners = {o for o, kind, _ in tagged if o and kind == "solution"}
    if not owners and name_match:
        owners = {name_match.group(1)}
        tagged = [(name_match.group(1) if kind == "solution" else o, kind, c) for o, kind, c in tagged]
    files = {}
    for ex_id in sorted(owners):
        if ex_id not in by_id:
            continue
        parts = [_cell_source(c) for o, kind, c in tagged if kind == "setup" and o in (None, ex_id)
                 or kind == "solution" and (o == ex_id or (o is None and len(owners) == 1))]
        files[by_id[ex_id].file] = "\n".join(parts)
    return files
