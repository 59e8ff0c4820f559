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
from types import MappingProxyType


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


class Versions:
    """The version tags of some dicts, read in place: a pre-filter for `Layout`'s comparisons.

    CPython bumps a dict's version tag (PEP 509) at every change to it: a key set, rebound or
    removed, a clear, an update. So if every tag still reads what it read when the contents
    were last verified, nothing in those dicts moved, and the comparison can be skipped. The
    tags are read through ctypes from where the dict keeps its tag, without touching the
    dicts' values: no reference count is written, so a worker forked from the zygote copies
    none of the pages those objects live on. Where the layout is not the one this was written
    for (another interpreter, another version), `Versions.of` gives None and every check
    compares in full, as it did before.

        >>> table = {"a": 1}
        >>> tags = Versions.of([table])
        >>> seen = tags.now() if tags else None
        >>> table["a"] = 2
        >>> tags is None or tags.now() != seen
        True
    """

    _TAG_OFFSET = 24  # PyObject_HEAD (refcount, type), ma_used, then ma_version_tag

    def __init__(self, cells):
        self._cells = tuple(cells)

    def now(self) -> tuple:
        return tuple(map(operator.attrgetter("value"), self._cells))

    @classmethod
    def of(cls, dicts) -> "Versions | None":
        """Tags for `dicts` (dicts, or a class's mappingproxy), or None where they cannot be read."""
        if not _tags_readable():
            return None
        import ctypes

        cells = []
        for d in dicts:
            if type(d) is MappingProxyType:  # a class's namespace: the dict behind the proxy
                d = ctypes.cast(id(d) + 16, ctypes.POINTER(ctypes.py_object)).contents.value
            # (a dict subclass keeps a dict's layout first: ctypes' StgDict for a Structure class)
            if not isinstance(d, dict) or ctypes.c_ssize_t.from_address(id(d) + 16).value != len(d):
                return None
            cells.append(ctypes.c_uint64.from_address(id(d) + cls._TAG_OFFSET))
        return cls(cells)


def _tags_readable() -> bool:
    """Does this interpreter keep dict version tags where `Versions` reads them, bumping one at
    every kind of change? (CPython 3.11-3.13 with the GIL; tested on a dict of its own.)"""
    known = _cache.get("tags")
    if known is None:
        known = _cache["tags"] = _test_tags()
    return known


_cache: dict[str, bool] = {}  # whether tags can be read here, once found (FILLED_AS_IT_RUNS)


def _test_tags() -> bool:
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13) or sys.maxsize < 2**63 - 1:
        return False  # only 64-bit CPython 3.11-3.13 keeps the tag 24 bytes into a dict
    if not getattr(sys, "_is_gil_enabled", lambda: True)():  # a free-threaded build: another layout
        return False
    try:
        import ctypes

        probe: dict = {}
        if ctypes.c_ssize_t.from_address(id(probe) + 16).value != 0:
            return False
        tag = ctypes.c_uint64.from_address(id(probe) + Versions._TAG_OFFSET)
        seen = [tag.value]
        for change in (lambda: probe.__setitem__("k", 1), lambda: probe.__setitem__("k", 2),
                       lambda: probe.update(j=3), lambda: probe.pop("j"), lambda: probe.setdefault("m", 4),
                       probe.popitem, lambda: probe.__delitem__("k"), lambda: probe.update(x=1), probe.clear):
            change()
            if tag.value in seen:
                return False
            seen.append(tag.value)
        return ctypes.c_ssize_t.from_address(id(probe) + 16).value == 0 and tag.value == seen[-1]
    except Exception:  # noqa: BLE001  anything unexpected: compare in full
        return False


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
        owners, getters, parts, funcs, held = [], [], [], [], []
        for space, before in snapshot.items():
            if space.startswith("sys.") or not before:
                continue
            found = watched[space]
            owners.append(found.space if isinstance(found, Some) else found)
            keys = tuple(before)
            getters.append(operator.itemgetter(keys[0], *keys))
            kept = [k[0] if type(k) in (Func, Held) else k for k in before.values()]
            parts.append((kept[0], *kept))
            funcs += [k for k in before.values() if type(k) is Func]
            held += [k for k in before.values() if type(k) is Held and not any(k[0] is h[0] for h in held)]
        self._owners, self._getters, self._parts = tuple(owners), tuple(getters), tuple(parts)
        self._raw = tuple(chain.from_iterable(parts))  # every namespace's, for a comparison of all
        self._funcs = tuple(f[0] for f in funcs)
        self._func_parts = tuple(tuple(f[i] for f in funcs) for i in (1, 2, 3))
        dicts = [h for h in held if h[1] is not None]
        self._dicts, self._seqs = tuple(h[0] for h in dicts), tuple(h[0] for h in held if h[1] is None)
        self._held_items = (tuple(map(len, self._dicts)), tuple(k for h in dicts for k in h[1]),
                            tuple(v for h in dicts for v in h[2]), tuple(map(len, self._seqs)),
                            tuple(v for h in held if h[1] is None for v in h[2]))
        modules = snapshot["sys.modules"]
        self._modules = (operator.itemgetter(*modules) if len(modules) > 1 else None, tuple(modules.values()), modules)
        # Each comparison's dicts, with the tags they had when it last found nothing moved.
        self._space_tags = Versions.of(map(vars, self._owners))
        self._held_tags = Versions.of(self._dicts)
        self._module_tags = Versions.of([sys.modules])
        self._modules_dict = sys.modules
        self._verified: dict[str, tuple | None] = {"spaces": None, "held": None, "modules": None}

    def _unchanged(self, what: str, tags) -> tuple | bool:
        """True if `tags` still read what they read at the last verification of `what`; else
        the tags now (to keep if this comparison finds nothing moved), or () without tags."""
        if tags is None:
            return ()
        now = tags.now()
        return True if now == self._verified[what] else now

    def _verify(self, what: str, tags, compare) -> bool:
        seen = self._unchanged(what, tags)
        if seen is True:
            return True
        same = compare()
        if same and seen:
            self._verified[what] = seen
        return same

    def _bindings_now(self) -> tuple:
        return tuple(chain.from_iterable(map(operator.call, self._getters, map(vars, self._owners))))

    def bindings_same(self) -> bool:
        """Namespace by namespace: once verified, only those whose tags moved are compared (the
        ex02 net patches and restores a few of torch's around every call; the grader's own
        hundred-odd namespaces then need no look)."""
        seen = self._unchanged("spaces", self._space_tags)
        if seen is True:
            return True
        verified = self._verified["spaces"]
        if not seen or verified is None:
            same = self._bindings_compared()
        else:
            same = self._owners_compared([n for n, (now, then) in enumerate(zip(seen, verified)) if now != then])
        if same and seen:
            self._verified["spaces"] = seen
        return same

    def _bindings_compared(self) -> bool:
        try:
            return all_same(self._bindings_now(), self._raw)
        except (KeyError, TypeError):  # a watched name removed
            return False

    def _owners_compared(self, moved: list[int]) -> bool:
        getters, owners, parts = self._getters, self._owners, self._parts
        try:
            return all(all_same(getters[n](vars(owners[n])), parts[n]) for n in moved)
        except (KeyError, TypeError):  # a watched name removed
            return False

    def accept_bindings(self) -> None:
        """The bindings as they are now become what the fast path expects (torch's own
        re-wrapping, which the slow path accepts by what it wraps)."""
        seen = self._unchanged("spaces", self._space_tags)
        try:
            parts = tuple(map(operator.call, self._getters, map(vars, self._owners)))
        except (KeyError, TypeError):
            return
        self._parts, self._raw = parts, tuple(chain.from_iterable(parts))
        if seen and seen is not True:
            self._verified["spaces"] = seen

    def contents_same(self) -> bool:
        return self._verify("held", self._held_tags, self._dicts_compared) and self._seqs_compared()

    def _dicts_compared(self) -> bool:
        lengths, keys, values = self._held_items[:3]
        now = (tuple(map(len, self._dicts)), tuple(chain.from_iterable(self._dicts)),
               tuple(chain.from_iterable(map(dict.values, self._dicts))))
        return all(map(all_same, now, (lengths, keys, values)))

    def _seqs_compared(self) -> bool:
        lengths, items = self._held_items[3:]
        return all_same(tuple(map(len, self._seqs)), lengths) and all_same(tuple(chain.from_iterable(self._seqs)), items)

    def functions_changed(self) -> list[str]:
        """The grader functions whose code or defaults are no longer what they were, named."""
        parts = [tuple(map(operator.attrgetter(name), self._funcs)) for name in FUNC_PARTS]
        if all(map(all_same, parts, self._func_parts)):
            return []
        return [f"changed: {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
                for n, fn in enumerate(self._funcs)
                if any(part[n] is not kept[n] for part, kept in zip(parts, self._func_parts))]

    def modules_untouched(self) -> bool:
        """Has `sys.modules` (the same dict) not changed at all since it was last verified? Read
        from its version tag alone; False wherever tags cannot vouch for it."""
        return sys.modules is self._modules_dict and self._unchanged("modules", self._module_tags) is True

    def vouch_modules(self) -> None:
        """`sys.modules` as it is now counts as verified (`Guard.admit`, right after adding a new
        name to a verified dict: every module that was there still is)."""
        if self._module_tags is not None and sys.modules is self._modules_dict:
            self._verified["modules"] = self._module_tags.now()

    def modules_same(self) -> bool:
        """Is every module there was still there? (Modules imported since are not watched.)"""
        if sys.modules is not self._modules_dict:  # rebound: compared in full, never by its tags
            return self._modules_compared()
        return self._verify("modules", self._module_tags, self._modules_compared)

    def _modules_compared(self) -> bool:
        getter, before, named = self._modules
        if getter is None:
            return all(sys.modules.get(k) is v for k, v in named.items())
        try:
            return all_same(getter(sys.modules), before)
        except KeyError:
            return False


FUNC_PARTS = ("__code__", "__defaults__", "__kwdefaults__")

__all__ = ["CONTAINERS", "FILLED_AS_IT_RUNS", "FUNC_PARTS", "Func", "Held", "Layout", "Some", "Versions", "all_same",
           "attrs", "fingerprint", "still"]
