"""Where the kit's own files are: the `grader` package and the kit around it.

The package sits in the kit (`KIT_ROOT/grader`) in a checkout; installed from a wheel, the
course files travel inside the package instead (see `grader.model.course.default_course_path`).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # .../grader
KIT_ROOT = PACKAGE_DIR.parent  # the folder holding course.toml, exercises/, solutions/
