"""The caps of what `grade batch` reads of a student (the reading itself: grader.model.files.read_capped)."""

from __future__ import annotations

from grader.model.files import read_capped  # noqa: F401  (read here by the cohort's modules)
from grader.sandbox.intake import LIMITS

SOURCE_CAP = LIMITS["max_file"]  # bytes of one .py file: the same cap as a single run's (grader.sandbox.intake)
TOTAL_CAP = LIMITS["max_total"]  # bytes of all .py files of one student
NOTEBOOK_CAP = 32 * 1024 * 1024  # bytes of one nbgrader notebook
