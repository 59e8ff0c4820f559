"""Stand-in for a missing ex11_estimate_loss.py (see README.md in this folder)."""

from grader.pieces.estimate_loss import estimate_loss  # noqa: F401
