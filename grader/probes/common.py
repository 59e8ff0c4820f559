"""Probes every exercise uses: call a function, read a constant."""

from __future__ import annotations

from grader.probes.errors import MissingName, NotImplementedYet


def _attribute(mod, name: str):
    try:
        return getattr(mod, name)
    except AttributeError:
        raise MissingName(f"没有找到 {name} / {name} is not defined in the file") from None


def call_function(mod, name: str, args: tuple = (), kwargs: dict | None = None):
    """`mod.name(*args, **kwargs)`."""
    return _attribute(mod, name)(*args, **(kwargs or {}))


def read_constant(mod, name: str):
    """The module-level constant `mod.name`; a stub's `NotImplemented` counts as not done."""
    value = _attribute(mod, name)
    if value is NotImplemented or value is Ellipsis:
        raise NotImplementedYet(f"{name} 还没有填写 / {name} is not filled in yet")
    return value
