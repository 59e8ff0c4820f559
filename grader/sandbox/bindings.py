"""What the guard watches, and how it tells that something moved (`grader.sandbox.guard`).

A binding is kept as a fingerprint: the object itself, compared by identity (never with
`==`, never `id()`, itself an audited event); a grader function with its code and defaults
(`Func`); a grader container with what it held (`Held`). `Layout` lays a whole snapshot out
for the check after every call:

    >>> import types
    >>> space = types.SimpleNamespace(table={"a": 1})
    >>> kept = {"demo": {"table": fingerprint(space.table)}, "sys.modules": {}}
    >>> layout = Layout(kept, {"demo": space})
    >>> layout.bindings_same(), layout.contents_same()
    (True, True)
    >>> space.table.clear(); layout.contents_same()
    False
"""

from __future__ import annotations

import operator
import sys
from itertools import chain


class Some:
    """A namespace of which only some names are watched."""

    def __init__(self, space, names):
        self.space, self.names = space, names

    def attrs(self) -> dict:
        found = vars(self.space)
        return {n: found[n] for n in self.names if n in found}


def attrs(space) -> dict:
    if isinstance(space, Some):
        return space.attrs()
    try:
        return dict(vars(space))
    except TypeError:
        return {}


class Func(tuple):
    """A function with what makes it what it is: (function, code, defaults, keyword defaults)."""


# Module-level containers the grader fills while it grades (a probe's cache of computed
# data, the uid leases): their identity is watched, not what they hold.
FILLED_AS_IT_RUNS = frozenset({"_cache", "_leases"})


class Held(tuple):
    """A dict, list or set of the grader's with what it held: (container, its keys, its items)."""


CONTAINERS = (dict, list, set)


def fingerprint(value):
    """The objects that make a binding what it is (compared by identity, never with ==;
    no `id()`, which is itself an audited event). A container of the grader's (the ex02
    net's table of aten names, a probe's list of targets) keeps its items too: a submission
    that reaches one through `__globals__` and empties it in place is caught."""
    kind = type(value)
    if kind.__name__ == "function":
        return Func((value, value.__code__, value.__defaults__, value.__kwdefaults__))
    if kind in CONTAINERS:
        return Held((value, tuple(value) if kind is dict else None, tuple(value.values() if kind is dict else value)))
    return value


def all_same(a, b) -> bool:
    """Element by element identity, at C speed."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def still(value, kept) -> bool:
    """Is `value` what `kept` (a fingerprint) says it was?"""
    if type(kept) is Func:
        return (value is kept[0] and value.__code__ is kept[1] and value.__defaults__ is kept[2]
                and value.__kwdefaults__ is kept[3])
    if type(kept) is Held:
        if value is not kept[0]:
            return False
        if kept[1] is not None:  # a dict: its keys, then its values
            return all_same(tuple(value), kept[1]) and all_same(tuple(value.values()), kept[2])
        return all_same(tuple(value), kept[2])
    return value is kept


class Layout:
    """What `Guard.check()` compares, laid out so that the common case (nothing moved) is a few
    passes at C speed: every watched binding of every namespace in one flat tuple (each
    namespace's getter asks for its first name twice, so that it always gives a tuple); every
    grader function once, with its code and defaults; the grader's containers (each once) with
    what they held; the entries `sys.modules` had.

    `snapshot` is {namespace name: {name: fingerprint}} (and "sys.*" entries), `watched`
    {namespace name: the namespace}, as `Guard` keeps them.
    """

    def __init__(self, snapshot: dict, watched: dict):
        owners, getters, raw, funcs, held = [], [], [], [], []
        for space, before in snapshot.items():
            if space.startswith("sys.") or not before:
                continue
            found = watched[space]
            owners.append(found.space if isinstance(found, Some) else found)
            keys = tuple(before)
            getters.append(operator.itemgetter(keys[0], *keys))
            kept = [k[0] if type(k) in (Func, Held) else k for k in before.values()]
            raw += [kept[0], *kept]
            funcs += [k for k in before.values() if type(k) is Func]
            held += [k for k in before.values() if type(k) is Held and not any(k[0] is h[0] for h in held)]
        self._owners, self._getters, self._raw = tuple(owners), tuple(getters), tuple(raw)
        self._funcs = tuple(f[0] for f in funcs)
        self._func_parts = tuple(tuple(f[i] for f in funcs) for i in (1, 2, 3))
        dicts = [h for h in held if h[1] is not None]
        self._dicts, self._seqs = tuple(h[0] for h in dicts), tuple(h[0] for h in held if h[1] is None)
        self._held_items = (tuple(map(len, self._dicts)), tuple(k for h in dicts for k in h[1]),
                            tuple(v for h in dicts for v in h[2]), tuple(map(len, self._seqs)),
                            tuple(v for h in held if h[1] is None for v in h[2]))
        modules = snapshot["sys.modules"]
        self._modules = (operator.itemgetter(*modules) if len(modules) > 1 else None, tuple(modules.values()), modules)

    def _bindings_now(self) -> tuple:
        return tuple(chain.from_iterable(map(operator.call, self._getters, map(vars, self._owners))))

    def bindings_same(self) -> bool:
        try:
            return all_same(self._bindings_now(), self._raw)
        except (KeyError, TypeError):  # a watched name removed
            return False

    def accept_bindings(self) -> None:
        """The bindings as they are now become what the fast path expects (torch's own
        re-wrapping, which the slow path accepts by what it wraps)."""
        try:
            self._raw = self._bindings_now()
        except (KeyError, TypeError):
            pass

    def contents_same(self) -> bool:
        now = (tuple(map(len, self._dicts)), tuple(chain.from_iterable(self._dicts)),
               tuple(chain.from_iterable(map(dict.values, self._dicts))), tuple(map(len, self._seqs)),
               tuple(chain.from_iterable(self._seqs)))
        return all(map(all_same, now, self._held_items))

    def functions_changed(self) -> list[str]:
        """The grader functions whose code or defaults are no longer what they were, named."""
        parts = [tuple(map(operator.attrgetter(name), self._funcs)) for name in FUNC_PARTS]
        if all(map(all_same, parts, self._func_parts)):
            return []
        return [f"changed: {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
                for n, fn in enumerate(self._funcs)
                if any(part[n] is not kept[n] for part, kept in zip(parts, self._func_parts))]

    def modules_same(self) -> bool:
        """Is every module there was still there? (Modules imported since are not watched.)"""
        getter, before, named = self._modules
        if getter is None:
            return all(sys.modules.get(k) is v for k, v in named.items())
        try:
            return all_same(getter(sys.modules), before)
        except KeyError:
            return False


FUNC_PARTS = ("__code__", "__defaults__", "__kwdefaults__")

__all__ = ["CONTAINERS", "FILLED_AS_IT_RUNS", "FUNC_PARTS", "Func", "Held", "Layout", "Some", "all_same", "attrs",
           "fingerprint", "still"]
