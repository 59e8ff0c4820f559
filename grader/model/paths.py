"""Where the kit's own files are: the `grader` package and the kit around it.

The package sits in the kit (`KIT_ROOT/grader`) in a checkout or a student release; installed
from a wheel, the course files (course.toml, exercises/, solutions/ when the kit has them,
datasets/catalog.toml) travel inside the package, in `grader/_kit/` (setup.py copies them
there when the wheel is built). `kit_file` finds one either way.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # .../grader
KIT_ROOT = PACKAGE_DIR.parent  # the folder holding course.toml, exercises/, solutions/
BUNDLED = PACKAGE_DIR / "_kit"  # the course files inside an installed package


def kit_file(relative: str) -> Path:
    """A file of the kit: beside the package in a checkout, else the copy installed inside it.

    Example: kit_file("course.toml") -> /work/kit/course.toml in a checkout,
    …/site-packages/grader/_kit/course.toml installed from the wheel.
    """
    beside = KIT_ROOT / relative
    if beside.exists() or not (BUNDLED / relative).exists():
        return beside
    return BUNDLED / relative
