"""What a Gradescope bundle's `run_autograder` does for one submission.

    python -m grader.build.gradescope_run --root /autograder

1. Find the course's exercise files anywhere in `ROOT/submission`: loose, in nested folders
   (an uploaded `exercises/` folder or a whole repository), or inside an uploaded zip. Files
   are matched by name (`ex03_param_budget.py`); when a name appears more than once the
   shallowest wins (then the first in path order). Links are not followed, `__MACOSX` is
   skipped, sizes are capped. The files found are copied into a fresh folder.
2. Grade that folder with the kit in the container tier (Gradescope's container per submission
   is the boundary; each worker drops to an unprivileged uid, grader.sandbox.container):
   `python -m grader all --submission DIR --isolation container --format gradescope …`
   in a process of its own.
3. Write `ROOT/results/results.json` atomically, after the grading: whatever the student's
   code printed or tried to write there, the file Gradescope reads is the kit's. If the kit
   could not grade at all, the file still says so (score 0 and why) rather than missing.

Example: an upload `my-work/exercises/ex01_windows.py` -> found {"ex01_windows.py":
"my-work/exercises/ex01_windows.py"}, graded, results.json with score 10 for ex01.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from grader.model.files import atomic_write
from grader.model.messages import say

MAX_FILE = 1 << 20  # one exercise file: 1 MB is far beyond any honest answer
MAX_MEMBERS = 10_000  # entries of an uploaded zip looked at
GRADE_TIMEOUT = 1800  # seconds for the whole course (Gradescope's own limit is set per assignment)


def _candidates(upload: Path, names: set[str]):
    """(depth, where, read) for every file named like an exercise, in folders and zips."""
    for folder, dirs, files in os.walk(upload, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != "__MACOSX")
        rel_folder = Path(folder).relative_to(upload)
        depth = len(rel_folder.parts)
        for name in sorted(files):
            path = Path(folder) / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue  # a link (to the reference, say) is never followed
            where = (rel_folder / name).as_posix()
            if name in names and info.st_size <= MAX_FILE:
                yield depth, where, (lambda p=path: p.read_bytes())
            elif name.lower().endswith(".zip"):
                yield from _zip_candidates(path, where, depth, names)


def _zip_candidates(path: Path, where: str, depth: int, names: set[str]):
    try:
        archive = zipfile.ZipFile(path)
        members = archive.infolist()[:MAX_MEMBERS]
    except Exception:  # noqa: BLE001 - the student's archive, whatever its damage: as if it held nothing
        return
    for member in members:
        inner = PurePosixPath(member.filename)
        if member.is_dir() or "__MACOSX" in inner.parts or inner.name not in names or member.file_size > MAX_FILE:
            continue
        if stat.S_ISLNK(member.external_attr >> 16):
            continue
        yield depth + len(inner.parts), f"{where}/{inner}", \
            (lambda a=archive, m=member: a.open(m).read(MAX_FILE + 1)[:MAX_FILE])


def collect_submission(upload: Path, dest: Path, names: list[str], unreadable: dict | None = None) -> dict[str, str]:
    """Copy each exercise file found in `upload` into `dest`; returns {file name: where found}.
    Files found but not readable (a damaged or encrypted zip member) go into `unreadable`.

    Example: upload/repo/exercises/ex01_windows.py and upload/ex01_windows.py ->
    {"ex01_windows.py": "ex01_windows.py"} (the shallower one).
    """
    dest.mkdir(parents=True, exist_ok=True)
    best: dict[str, tuple] = {}
    if upload.is_dir():
        for depth, where, read in _candidates(upload, set(names)):
            name = PurePosixPath(where).name
            if name not in best or (depth, where) < best[name][:2]:
                best[name] = (depth, where, read)
    found, damaged = {}, {}
    for name, (_, where, read) in sorted(best.items()):
        try:
            (dest / name).write_bytes(read())
        except Exception as err:  # noqa: BLE001 - an encrypted member, corrupt deflate/LZMA data (zlib.error,
            # LZMAError, EOFError): the upload's damage, never the autograder's failure
            damaged[name] = f"{where} ({type(err).__name__})"
            continue
        found[name] = where
    if unreadable is not None:
        unreadable.update(damaged)
    return found


def _listed(files: dict[str, str]) -> str:
    """{"ex01_windows.py": "work/ex01_windows.py"} -> "ex01_windows.py (work/ex01_windows.py)"."""
    return ", ".join(f"{name} ({where})" for name, where in files.items())


def _failed(reason: str) -> dict:
    return {"score": 0, "execution_time": 0, "output": reason, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": []}


def run(root: Path) -> dict:
    """Grade `root/submission` and write `root/results/results.json`; returns what was written."""
    settings_path = root / "source" / "gradescope.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
    lang = settings.get("lang", "zh")
    hidden = settings.get("hidden_visibility", "after_published")
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    from grader.model.course import load_course

    names = [e.file for e in load_course().exercises]
    with tempfile.TemporaryDirectory(prefix="gradescope-") as work:
        work = Path(work)
        unreadable: dict[str, str] = {}
        found = collect_submission(root / "submission", work / "submission", names, unreadable)
        missing = [n for n in names if n not in found]
        lines = [f"found {name}: {where}" for name, where in found.items()]
        lines += [f"could not read {name}: {where}" for name, where in unreadable.items()]
        if missing:
            lines.append("missing: " + ", ".join(missing))
        print("\n".join(lines), flush=True)
        out = work / "results.json"
        command = [sys.executable, "-m", "grader", "--lang", lang, "all", "--submission", str(work / "submission"),
                   "--isolation", "container", "--format", "gradescope", "--hidden-visibility", hidden, "--out", str(out)]
        try:
            proc = subprocess.run(command, cwd=work, timeout=GRADE_TIMEOUT, stdin=subprocess.DEVNULL)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        try:
            data = json.loads(out.read_text(encoding="utf-8")) if code in (0, 1) else None
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
            data = _failed(say("gradescope_could_not_grade", lang, code=code))
        notes = "\n".join(filter(None, [
            say("gradescope_files_graded", lang, files=_listed(found)) if found else "",
            say("gradescope_unreadable", lang, files=_listed(unreadable)) if unreadable else "",
        ])) or say("gradescope_nothing_found", lang, example=names[0])
        if missing and found:
            notes += "\n" + say("gradescope_not_found", lang, files=", ".join(n for n in missing if n not in unreadable))
        data["output"] = notes + ("\n\n" + data["output"] if data.get("output") else "")
    # after the grading, so that nothing the submission did can stand in for it
    atomic_write(results, json.dumps(data, ensure_ascii=False, indent=2))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grade a Gradescope submission (the bundle's run_autograder).")
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")))
    args = parser.parse_args(argv)
    run(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
