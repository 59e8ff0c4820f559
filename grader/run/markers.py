"""The checks' pytest markers, read in one place.

A check module carries `pytestmark = pytest.mark.exercise("ex03")`; each check may carry
`points(n)`, `public`, `manual` and `timeout_s(seconds)`. The grader reads them from a
collected pytest item (`grade`, `grade batch`) or from the function itself (a notebook's
test cell), and both routes come through `marks_of`.

    >>> marks_of(check_function)   # {"exercise": ("ex03",), "points": (2,), "public": ()}
"""

from __future__ import annotations

import sys

MARKERS = (
    "exercise(id): the exercise a check module belongs to",
    "points(n): the points of a check",
    "public: a check whose inputs students may see",
    "manual: graded by hand (no points from the grader)",
    "timeout_s(seconds): the check's own time limit",
)


def marks_of(func) -> dict[str, tuple]:
    """The marks on a check function and its module, by name: {name: args}."""
    module = sys.modules.get(func.__module__)
    found = {}
    marks = getattr(module, "pytestmark", []) if module else []
    marks = list(marks) if isinstance(marks, (list, tuple)) else [marks]
    for mark in marks + list(getattr(func, "pytestmark", [])):
        mark = getattr(mark, "mark", mark)  # a MarkDecorator holds its Mark
        found[mark.name] = mark.args
    return found


def exercise_of(item) -> str:
    marker = item.get_closest_marker("exercise")
    if marker:
        return marker.args[0]
    return item.module.__name__.split("_")[1]  # test_ex03_param_budget -> ex03


def points_of(item) -> int:
    marker = item.get_closest_marker("points")
    return int(marker.args[0]) if marker else 0


def is_public(item) -> bool:
    return item.get_closest_marker("public") is not None


def is_manual(item) -> bool:
    return item.get_closest_marker("manual") is not None


def timeout_of(item, default: float) -> float:
    marker = item.get_closest_marker("timeout_s")
    return float(marker.args[0]) if marker else default
