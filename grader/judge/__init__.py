"""What checks are written with: call the student and the reference, compare, diagnose.

A check module imports its vocabulary from here (see grader/per_exercise/README.md):

    from grader.judge import call, probe, read, same, check_value, Tol

The names are looked up on first use (PEP 562): importing a module of this package that
needs no torch (`grader.judge.draws`, read before the zygote starts) does not import torch,
so that spawned workers start importing it alongside the judge.
"""

import importlib

_FROM = {"Tol": "grader.judge.compare", "CheckFailed": "grader.model.results", "Finding": "grader.model.results",
         **{name: "grader.judge.verdicts" for name in ("assert_ok", "call", "check_hand", "check_value", "diagnose", "fail",
                                                        "observe", "probe", "read", "same")}}

__all__ = ["Tol", "call", "read", "probe", "same", "check_value", "check_hand", "observe", "fail", "assert_ok",
           "diagnose", "CheckFailed", "Finding"]


def __getattr__(name: str):
    if name in _FROM:
        value = getattr(importlib.import_module(_FROM[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
