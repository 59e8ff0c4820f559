"""Stand-in for a missing ex11_estimate_loss.py (see README.md in this folder)."""

from grader.probes._pieces import estimate_loss  # noqa: F401
