"""Where the kit's own files are: the `grader` package and the kit around it.

The package sits in the kit (`KIT_ROOT/grader`) in a checkout or a student release; installed
from a wheel, the course files (course.toml, exercises/, solutions/ when the kit has them,
datasets/catalog.toml) travel inside the package, in `grader/_kit/` (setup.py copies them
there when the wheel is built, as the release's build does). `kit_file` finds one either way.

Installed, `KIT_ROOT` is site-packages: what lies beside the package there belongs to other
distributions (Hugging Face's `datasets/`, say), so an installed kit reads only its own copy.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # .../grader
KIT_ROOT = PACKAGE_DIR.parent  # the folder holding course.toml, exercises/, solutions/
BUNDLED = PACKAGE_DIR / "_kit"  # the course files inside an installed package
# The kit's two distributions, named apart so that a wheel says whom it is for: the instructor's,
# built from this repository (its wheel carries the reference in grader/_kit/solutions/), and
# the student release `grade release` writes (no reference anywhere in it).
INSTRUCTOR_DISTRIBUTION = "gpt-course-grader-instructor"
STUDENT_DISTRIBUTION = "gpt-course-grader"


def in_checkout() -> bool:
    """Is the package in a kit's folder (a checkout, a release folder, an editable install)?

    True when course.toml is beside it, or when it carries no course of its own.
    """
    return (KIT_ROOT / "course.toml").is_file() or not BUNDLED.is_dir()


def kit_file(relative: str) -> Path:
    """A file of the kit: beside the package in a checkout, else the copy installed inside it.

    Example: kit_file("course.toml") -> /work/kit/course.toml in a checkout,
    …/site-packages/grader/_kit/course.toml installed from the wheel.
    """
    return KIT_ROOT / relative if in_checkout() else BUNDLED / relative


def checkout_folder(relative: str) -> Path | None:
    """A folder of the kit's checkout (`datasets`), or None when the kit is installed."""
    return KIT_ROOT / relative if in_checkout() else None


def other_copies() -> list[Path]:
    """The kit's other copies this installation knows of, each holding the reference: the
    checkout a `pip install` was made from (pip's `direct_url.json`) when the kit runs
    installed, and the installed package (its `grader/_kit/`) when it runs from a checkout
    (`PYTHONPATH`, or a `pip install .` into a `.venv` inside the checkout). Read once per
    run, by the judge.

    >>> other_copies()   # installed from /home/t/kit: [PosixPath('/home/t/kit')]
    """
    import json
    import os
    from importlib import metadata

    found = []
    for name in (INSTRUCTOR_DISTRIBUTION, STUDENT_DISTRIBUTION):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        try:
            url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
        except (ValueError, AttributeError, OSError):
            url = ""
        # The checkout an install came from, when the kit runs installed. (Run from a checkout, an
        # editable install's direct_url names a checkout: this one, or one a developer copied this
        # from, left as it is.)
        if not in_checkout() and isinstance(url, str) and url.startswith("file://"):
            found.append(Path(url[len("file://"):]))
        installed = Path(str(dist.locate_file(""))).resolve()
        if (installed / "grader" / "_kit").is_dir():
            found.append(installed)
    return [p for p in dict.fromkeys(found) if p.is_dir() and os.path.realpath(p) != os.path.realpath(KIT_ROOT)]


# The kit's own folders: never a place for what a command writes (a gradebook's staged
# students inside solutions/ would pass for reference code).
OWN_FOLDERS = ("solutions", "exercises", "grader", "tests", "bench", "datasets", ".git")


def inside_the_kit(path: str | Path) -> bool:
    """Whether `path` (resolved) is one of the kit's own folders or inside one (the package
    itself, installed or not, included).

    >>> inside_the_kit(KIT_ROOT / "solutions" / "out"), inside_the_kit(KIT_ROOT / "out")
    (True, False)
    """
    import os

    real = Path(os.path.realpath(path))
    owned = [PACKAGE_DIR, *(KIT_ROOT / name for name in OWN_FOLDERS if in_checkout())]
    return any(real == folder or folder in real.parents for folder in owned)
