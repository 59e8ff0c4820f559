"""Stand-in for a missing ex08_get_batch.py (see README.md in this folder)."""

from grader.probes._pieces import get_batch  # noqa: F401
