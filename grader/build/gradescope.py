"""`grade gradescope OUT.zip`: a Gradescope autograder bundle, built from the instructor's kit.

The zip holds what Gradescope's "Zip file upload" expects at its top level:

    setup.sh         run once, as root, when Gradescope builds the image: a Python >= 3.11
                     (Gradescope's Ubuntu base images ship an older one: deadsnakes' python3.11
                     when none is found), a venv in /autograder/venv, the CPU torch wheel
                     (`pip install torch==2.13.0` from PyTorch's CPU index), then the kit from
                     kit/ (its wheel carries course.toml, the checks and the reference), and
                     kit/ deleted again so that no reference source is left on disk
    run_autograder   run for every submission: `python -m grader.build.gradescope_run`, which
                     finds the exercise files anywhere in /autograder/submission (nested
                     folders, an uploaded zip), grades them fenced with
                     `grade all --submission … --format gradescope`, and writes
                     /autograder/results/results.json (see grader.build.gradescope_run)
    kit/             the kit's source: grader/, course.toml, exercises/, solutions/, the data
                     catalog, pyproject.toml, setup.py
    data/            the lesson's corpus (tinyshakespeare/input.txt, sha256-checked on use),
                     when this machine has it; otherwise setup.sh runs `grade data`
    gradescope.json  the bundle's settings: hidden checks' visibility, the report's language
    README.md        for the course team: the manual ex04 question, what a student uploads

Everything is rooted at $AUTOGRADER_ROOT (default /autograder), so the suite runs the bundle
in a temporary folder laid out like Gradescope's.
"""

from __future__ import annotations

import json
import stat
import time
import zipfile
from pathlib import Path

import click

from grader.model.course import Course
from grader.model.messages import say
from grader.report.gradescope import HIDDEN_CHOICES, HIDDEN_VISIBILITY

TORCH = "torch==2.13.0"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
KIT_FILES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "course.toml", "datasets/catalog.toml",
             "datasets/README.md"]
KIT_FOLDERS = ["grader", "exercises", "solutions"]

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euxo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"

# A Python the kit runs on (>= 3.11); Gradescope's Ubuntu images ship an older python3.
PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null &&
     "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    PY="$candidate"; break
  fi
done
if [ -z "$PY" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y software-properties-common
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update
  apt-get install -y python3.11 python3.11-venv
  PY=python3.11
fi
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
# The CPU build of torch first: a bare "torch" would pull a multi-GB CUDA build.
"$ROOT/venv/bin/python" -m pip install "{TORCH}" --index-url {TORCH_INDEX}
"$ROOT/venv/bin/python" -m pip install "$SOURCE/kit"
# The installed kit carries the reference and the checks; no copy of them stays on disk.
rm -rf "$SOURCE/kit"
# Gradescope runs one container per submission: the container is the boundary, and inside it each
# worker drops to an unprivileged uid (grade all --isolation container). What that uid must not
# read is closed to it now, and libseccomp builds the workers' syscall filter.
command -v apt-get >/dev/null && {{ apt-get install -y libseccomp2 >/dev/null 2>&1 || true; }}
"$ROOT/venv/bin/grade" close-secrets
if [ ! -d "$SOURCE/data/tinyshakespeare" ]; then
  XDG_CACHE_HOME="$SOURCE/data-cache" "$ROOT/venv/bin/grade" data
  mkdir -p "$SOURCE/data/tinyshakespeare"
  cp "$SOURCE/data-cache/gpt-course/tinyshakespeare/"* "$SOURCE/data/tinyshakespeare/"
fi
"$ROOT/venv/bin/grade" --version
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; results/results.json is what it reads back.
# The root is $AUTOGRADER_ROOT (default /autograder), so that a test can run it elsewhere.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export GPT_COURSE_DATA="$ROOT/source/data"
# The course secret (per-submission hidden inputs): root's alone, taken out of the environment
# before any student code runs (grader.judge.draws)
if [ -f "$ROOT/source/course-secret" ]; then
  chmod 600 "$ROOT/source/course-secret"
  GRADE_COURSE_SECRET="$(cat "$ROOT/source/course-secret")"
  export GRADE_COURSE_SECRET
fi
cd "$ROOT/source"
exec "$ROOT/venv/bin/python" -m grader.build.gradescope_run --root "$ROOT"
"""

README = """# Gradescope autograder: {title}

Built by `grade gradescope` (grade {version}). Upload this zip as the assignment's autograder
("Zip file upload"); Gradescope runs `setup.sh` once when it builds the image and
`run_autograder` for every submission.

- Students upload their `exercises/exNN_*.py` files: loose, in folders (for example the whole
  `exercises/` folder or their repository), or as one zip. The autograder finds each file of
  the course by its name anywhere in the upload; a file that appears twice is taken from the
  shallowest folder. Missing exercises score 0 and say so.
- Each check is a test (`ex03.02 …`); hidden checks are `{hidden}` (rebuild with
  `grade gradescope --hidden-visibility after_published|after_due_date`). The summary students
  always see gives each exercise's public checks' score; hidden checks' points count once they
  are shown.
- Autograder points: {points}. ex04's `WHY_PARALLEL` is a written answer graded by hand: add it
  as a separate manually graded question (see the kit's README).
"""


def _kit_entries(course: Course):
    """(path in the zip, file on disk) for the kit's source, without caches."""
    root = course.root
    for name in KIT_FILES:
        if (root / name).is_file():
            yield f"kit/{name}", root / name
    for folder in KIT_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix not in (".pyc", ".pyo") \
                    and not path.name.startswith(".grade"):
                yield f"kit/{rel.as_posix()}", path


def _corpus(course: Course) -> Path | None:
    from grader.data import datasets

    data_dir = course.root / course.data_dir if course.data_dir else None
    try:
        return datasets.resolve("tinyshakespeare", data_dir=data_dir, allow_download=False, progress=False)
    except datasets.DataError:
        return None


def _add(bundle: zipfile.ZipFile, name: str, data: bytes | str, executable: bool = False, mode: int | None = None) -> None:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((mode if mode is not None else 0o755 if executable else 0o644) | stat.S_IFREG) << 16
    bundle.writestr(info, data)


def _secret(course: Course) -> bytes:
    """The course's secret (GRADE_COURSE_SECRET, or the kit's `.course-secret`), so the bundle
    draws the hidden inputs `grade batch` draws; else one of the bundle's own. Students never
    see the bundle, so their hidden inputs are drawn per submission on Gradescope too."""
    import secrets

    from grader.judge.draws import course_secret

    return course_secret(course) or secrets.token_hex(32).encode()


def build_bundle(course: Course, out: Path, *, hidden_visibility: str = HIDDEN_VISIBILITY, lang: str = "zh",
                 echo=click.echo) -> Path:
    """Write the autograder zip to `out`; returns it. Raises click exceptions on misuse.

    Example: build_bundle(course, Path("autograder.zip")) -> autograder.zip holding setup.sh,
    run_autograder, kit/…, data/tinyshakespeare/input.txt, gradescope.json, README.md.
    """
    from grader import __version__

    if hidden_visibility not in HIDDEN_CHOICES:
        raise click.UsageError(say("gradescope_visibility", lang, choices=", ".join(HIDDEN_CHOICES), value=hidden_visibility))
    if not course.solutions_dir.is_dir() or not (course.root / "grader" / "per_exercise").is_dir():
        raise click.UsageError("Gradescope 评分包要从教师工具包生成（需要 solutions/ 与 grader/per_exercise/）/ "
                               "the bundle is built from the instructor's kit (solutions/ and grader/per_exercise/)")
    out = Path(out)
    if out.suffix != ".zip":
        raise click.UsageError(f"{out}: 应以 .zip 结尾 / must end in .zip")
    out.parent.mkdir(parents=True, exist_ok=True)
    corpus = _corpus(course)
    points = sum(e.points for e in course.exercises)
    settings = {"hidden_visibility": hidden_visibility, "lang": lang, "version": __version__,
                "exercises": [e.file for e in course.exercises]}
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as bundle:
        _add(bundle, "setup.sh", SETUP_SH, executable=True)
        _add(bundle, "run_autograder", RUN_AUTOGRADER, executable=True)
        _add(bundle, "gradescope.json", json.dumps(settings, indent=2))
        _add(bundle, "course-secret", _secret(course), mode=0o600)
        _add(bundle, "README.md", README.format(title=course.title.en, version=__version__, hidden=hidden_visibility,
                                                points=points))
        for name, path in _kit_entries(course):
            _add(bundle, name, path.read_bytes())
        if corpus is not None:
            _add(bundle, f"data/tinyshakespeare/{corpus.name}", corpus.read_bytes())
    tmp.replace(out)
    echo(f"Gradescope 评分包已写入 / autograder bundle written to {out} "
         f"({len(course.exercises)} 个练习 / exercises; data: {'included' if corpus else 'setup.sh runs grade data'})")
    return out
