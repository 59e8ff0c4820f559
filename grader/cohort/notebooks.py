"""nbgrader notebooks: the exercise files in a student's submitted notebook.

    >>> extract_notebook(Path("submitted/ann/ch05/ch05.ipynb"), course)
    {'ex01_windows.py': 'import torch\\n…def shift_pairs(tokens): …'}
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

from grader.cohort.capped import NOTEBOOK_CAP, SOURCE_CAP, read_capped
from grader.model.course import Course

_MAGIC = re.compile(r"^\s*[%!]")
# json.loads builds an object per value: a notebook of ten million empty lists (30 MB) takes
# about 1 GB. One larger than _APART is read in a forked child whose address space may grow by
# _CHILD_MEMORY at most; it sends back the exercise files alone, each at most SOURCE_CAP bytes.
_APART = 1 << 20
_CHILD_MEMORY = 512 << 20


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
    return "\n".join("# " + line if _MAGIC.match(line) else line for line in text.splitlines()) + "\n"


def extract_notebook(path: Path, course: Course) -> dict[str, str]:
    """The exercise files in the nbgrader notebook at `path` (see `extract_notebook_text`)."""
    data = read_capped(str(path), NOTEBOOK_CAP)
    return {} if data is None else extract_notebook_text(data, Path(path).name, course)


def extract_notebook_text(data: bytes, filename: str, course: Course) -> dict[str, str | None]:
    """The exercise files in an nbgrader notebook: {"ex03_param_budget.py": code}; None for a
    file over SOURCE_CAP (refused as a loose file over it would be, never held here).

    A cell belongs to exercise exNN when its nbgrader `grade_id` starts with "exNN"
    (`ex03_answer`, `ex03-solution`), or, failing that, when the notebook's name does.
    An exercise's file is the notebook's code cells that are not test cells (nbgrader
    `grade` without `solution`), in order: the set-up cells (imports) and the solution
    cells of that exercise; solution cells of other exercises are left out. Lines starting
    with % or ! (IPython magics) are commented out. A notebook that is not JSON gives {}.
    """
    if len(data) > _APART and hasattr(os, "fork") and sys.platform == "linux":
        return _extract_apart(data, filename, course)
    return _extract(data, filename, course)


def _extract(data: bytes, filename: str, course: Course) -> dict[str, str | None]:
    cells = _code_cells(data)
    if cells is None:
        return {}
    by_id = {ex.id: ex for ex in course.exercises}
    name_match = re.match(r"(ex\d\d)", filename)
    tagged: list[tuple[str | None, str, dict]] = []
    for cell in cells:
        meta = cell["nbgrader"]  # checked by _code_cells
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
        code = "\n".join(parts)
        files[by_id[ex_id].file] = code if len(code.encode("utf-8", "surrogatepass")) <= SOURCE_CAP else None
    return files


def _code_cells(data: bytes) -> list[dict] | None:
    """The code cells, each as {"source": str or [str, …], "nbgrader": {grade_id, grade, solution}}
    with nothing else kept; None when the data is not a notebook's JSON."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))  # a BOM, as some editors save it
    except (ValueError, RecursionError, MemoryError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return None
    kept = []
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        meta = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        source = cell.get("source", "")
        kept.append({"source": [s for s in source if isinstance(s, str)] if isinstance(source, list) else str(source),
                     "nbgrader": {k: meta[k] for k in ("grade_id", "grade", "solution") if k in meta
                                  and isinstance(meta[k], (str, int, float, bool))}})
    return kept


def _extract_apart(data: bytes, filename: str, course: Course) -> dict[str, str | None]:
    """`_extract` in a forked child with capped memory, so this process never holds the
    notebook's objects. The child sends a JSON line {file: byte count, or -1 when over the
    cap}, then the files' bytes; this side reads no more than that (each file at most
    SOURCE_CAP). A child that runs out of memory, dies or sends anything else: not readable."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: extract, send the files back, exit
        code = 1
        try:
            os.close(read_end)
            signal.alarm(120)  # a 32 MiB notebook parses in seconds; a child stuck on a lock inherited
            _cap_address_space(_CHILD_MEMORY)  # from another thread at the fork ends, and reads as not JSON
            files = {name: None if text is None else text.encode("utf-8", "surrogatepass")
                     for name, text in _extract(data, filename, course).items()}
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(json.dumps({n: -1 if b is None else len(b) for n, b in files.items()}).encode() + b"\n")
                for blob in files.values():
                    pipe.write(blob or b"")
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            files = _read_files(pipe, {ex.file for ex in course.exercises})
    finally:
        _, status = os.waitpid(pid, 0)
    return files if status == 0 and files is not None else {}


def _read_files(pipe, known: set[str]) -> dict[str, str | None] | None:
    """The child's answer (see `_extract_apart`), or None when it is not one."""
    header = pipe.readline(65536)
    try:
        sizes = json.loads(header)
    except ValueError:
        return None
    if not isinstance(sizes, dict) or not all(name in known and isinstance(size, int) and -1 <= size <= SOURCE_CAP
                                               for name, size in sizes.items()):
        return None
    files: dict[str, str | None] = {}
    for name, size in sizes.items():
        blob = pipe.read(size) if size >= 0 else None
        if blob is not None and len(blob) != size:
            return None
        files[name] = None if blob is None else blob.decode("utf-8", "surrogatepass")
    return files


def _cap_address_space(extra: int) -> None:
    """RLIMIT_AS at this process's present size plus `extra` bytes (torch's mappings are
    already counted), so allocating beyond raises MemoryError."""
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = size + extra
        resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    except (OSError, ValueError, StopIteration):
        pass
