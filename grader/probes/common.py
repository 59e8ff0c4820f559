"""What every exercise's probes share: call a function, read a constant, look a name up,
and swap in correct earlier pieces for one call (ex10–ex12)."""

from __future__ import annotations

import contextlib

from grader.pieces import imported_from_earlier
from grader.model.missing import MissingName, NotImplementedYet


def attribute(mod, name: str):
    """`mod.name`, or MissingName saying the file does not define it."""
    try:
        return getattr(mod, name)
    except AttributeError:
        raise MissingName(f"没有找到 {name} / {name} is not defined in the file") from None


def call_function(mod, name: str, args: tuple = (), kwargs: dict | None = None):
    """`mod.name(*args, **kwargs)`."""
    return attribute(mod, name)(*args, **(kwargs or {}))


def read_constant(mod, name: str):
    """The module-level constant `mod.name`; a stub's `NotImplemented` counts as not done."""
    value = attribute(mod, name)
    if value is NotImplemented or value is Ellipsis:
        raise NotImplementedYet(f"{name} 还没有填写 / {name} is not filled in yet")
    return value


_MISSING = object()


@contextlib.contextmanager
def swapped(mod, fn_name: str, **names):
    """Replace module globals (`get_batch`, …) for one call, restoring them after.

    Only a name the module imported from an earlier exercise is replaced
    (`grader.pieces.imported_from_earlier`): a `get_batch` or `estimate_loss` written in the
    file being graded is graded as written; a name the file lacks (an earlier exercise's
    notebook cell that failed, say) is supplied, so an earlier bug is not charged twice.
    Besides the module itself, a known mistake's override function reads its globals from
    its own module (the exercise's checks, where `MISTAKES` is): those are swapped too, so a mistake's variant
    sees exactly the pieces the student's code sees.
    """
    spaces = [vars(mod)]
    fn = getattr(mod, fn_name, None)
    own = getattr(fn, "__globals__", None)
    if isinstance(own, dict) and own is not vars(mod) and str(own.get("__name__", "")).startswith("grader.per_exercise."):
        spaces.append(own)
    saved = []
    for space in spaces:
        for key, value in names.items():
            if key in space and not imported_from_earlier(space[key]):
                continue  # written in the file being graded: graded as written
            saved.append((space, key, space.get(key, _MISSING)))
            space[key] = value
    try:
        yield
    finally:
        for space, key, old in reversed(saved):
            if old is _MISSING:
                space.pop(key, None)
            else:
                space[key] = old
