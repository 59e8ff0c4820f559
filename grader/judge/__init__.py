"""What checks are written with: call the student and the reference, compare, diagnose.

A check module imports its vocabulary from here (see grader/checks/README.md):

    from grader.judge import call, probe, read, same, check_value, Tol
"""

from grader.judge.compare import Tol
from grader.judge.verdicts import assert_ok, call, check_value, diagnose, fail, observe, probe, read, same
from grader.model.results import CheckFailed, Finding

__all__ = ["Tol", "call", "read", "probe", "same", "check_value", "observe", "fail", "assert_ok",
           "diagnose", "CheckFailed", "Finding"]
