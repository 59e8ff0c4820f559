"""The observers' guard: sealed before a submission runs, verified after every call.

A few facts can only be seen inside the student's process (grad mode during a call, which
torch functions ran, how often a model was called). The probes that see them live in the
worker with the submission, so `Guard.seal()` runs before the submission's first line:

1. **Out of reach by name.** Every `grader.probes.*` and `grader.sandbox.*` module is taken
   out of `sys.modules` and off its parent package; the worker keeps its own references
   (`Guard.probe`). `import grader.probes.ex02` from a submission is refused (an audit hook
   on the "import" event: only `grader.tinygpt` of the grader is for submissions), and
   `sys.modules["grader.probes.ex11"]` is a KeyError.
2. **The tools a tamperer needs fail.** Python's audit hooks (PEP 578: once added, no Python
   code can remove one) refuse, when the submission's own code asks for them (directly or
   through inspect, traceback, threading, ctypes): frames (`sys._getframe`,
   `sys._current_frames`, `tb_frame`, `gi_frame`, `cr_frame`, `ag_frame`), the garbage
   collector's object graph (`gc.get_objects`, `get_referrers`, `get_referents`),
   `sys.settrace` / `setprofile`, a second audit hook, ctypes, assigning a function's
   `__code__`, opening `/proc/*/mem`.
3. **Verified after.** `Guard.check()` compares, after the import and after every call,
   the identity of everything the observers rely on with a snapshot taken at `seal()`:
   the grader's modules (every global, every function's code object and defaults, every
   class's attributes), the torch functions the ex02 net wraps and everything else in
   `torch`, `torch.nn.functional`, `torch.Tensor`, `torch.nn.Module`, `builtins`, the
   entries of `sys.modules` and `sys.meta_path` / `sys.path_hooks`.

What was refused or changed is reported with the answer (`"tampered"`), and the judge scores
that exercise 0 naming it. What this does not stop: a submission that reads a grader object
it was handed through `__globals__` / `__closure__` and mutates data in place (the judge's
syntax scan, `grader.judge.scan`, flags those attributes for review).
"""

from __future__ import annotations

import sys
from types import FunctionType

from grader.sandbox.bindings import FILLED_AS_IT_RUNS as _FILLED_AS_IT_RUNS
from grader.sandbox.bindings import FUNC_PARTS as _FUNC_PARTS
from grader.sandbox.bindings import Func as _Func
from grader.sandbox.bindings import Held as _Held
from grader.sandbox.bindings import Layout
from grader.sandbox.bindings import Some as _Some
from grader.sandbox.bindings import all_same as _all_same
from grader.sandbox.bindings import attrs as _attrs
from grader.sandbox.bindings import fingerprint as _fingerprint
from grader.sandbox.bindings import still as _still
from grader.sandbox.frames import frameless_signals, raw_memory_path, trusted_code_dirs

# Grader modules a submission may import (the documented TinyGPT of ex05).
ALLOWED_GRADER_MODULES = ("grader.tinygpt",)
# Grader modules the worker hides (its own code and the observers).
HIDDEN_PREFIXES = ("grader.probes", "grader.sandbox")
# ...but not these: the probes' package (its observers are taken off it) and the exception
# classes the grader raises and recognises by class (a fresh copy would be another class).
KEPT = ("grader.probes", "grader.probes.errors")

_REFUSED_EVENTS = {
    "sys._getframe": "sys._getframe (frame inspection)",
    "sys._current_frames": "sys._current_frames (frame inspection)",
    "gc.get_objects": "gc.get_objects (walking the object graph)",
    "gc.get_referrers": "gc.get_referrers (walking the object graph)",
    "gc.get_referents": "gc.get_referents (walking the object graph)",
    "sys.settrace": "sys.settrace",
    "sys.setprofile": "sys.setprofile",
    "sys.addaudithook": "sys.addaudithook",
    "ctypes.dlopen": "ctypes (raw memory access)",
    "ctypes.dlsym": "ctypes (raw memory access)",
    "ctypes.cdata": "ctypes (raw memory access)",
    "ctypes.addressof": "ctypes (raw memory access)",
    "ctypes.string_at": "ctypes (raw memory access)",
    "ctypes.wstring_at": "ctypes (raw memory access)",
    "ctypes.PyObj_FromPtr": "ctypes (raw memory access)",
    "ctypes.call_function": "ctypes (raw memory access)",
}
_FRAME_ATTRIBUTES = {"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"}
# Library frames between the submission and an audited call that count as the submission's
# own doing (it asked inspect for a frame); torch's and logging's own uses are theirs.
_AGENTS = ("/inspect.py", "/traceback.py", "/threading.py", "/bdb.py", "/pdb.py", "/ctypes/", "/asyncio/",
           "<frozen importlib", "/importlib/")


def _torch_namespaces():
    import torch
    import torch.nn.functional as F

    spaces = {"torch": _Some(torch, _TORCH_NAMES), "torch.nn.functional": F, "torch.Tensor": torch.Tensor,
              "torch.Generator": torch.Generator,
              "torch.nn.Module": torch.nn.Module, "torch.special": torch.special, "torch._C._nn": torch._C._nn,
              "torch.nn.CrossEntropyLoss": torch.nn.CrossEntropyLoss, "torch.nn.NLLLoss": torch.nn.NLLLoss,
              "torch.random": torch.random, "torch.autograd.grad_mode": torch.autograd.grad_mode}
    base = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase", None)
    if base is not None:
        spaces["torch._C.TensorBase"] = base
    import torch.utils._python_dispatch as dispatch

    spaces["torch.utils._python_dispatch"] = dispatch
    return spaces


def _torch_dir() -> str | None:
    torch = sys.modules.get("torch")
    path = getattr(torch, "__file__", None)
    return path.rsplit("/", 1)[0] + "/" if path else None



def _warm() -> None:
    """Bind what the grader binds lazily (so that a later first use is not a change)."""
    plaincodec = sys.modules.get("grader.sandbox.plaincodec")
    if plaincodec is not None:
        plaincodec._tables()


# Of torch's own namespace, what the observers call (a submission may rebind the rest, as the
# old rng attack rebinds torch.randint: its own answers change, the judge compares them).
_TORCH_NAMES = ("softmax", "log_softmax", "logsumexp", "is_grad_enabled", "set_grad_enabled", "no_grad",
                "enable_grad", "inference_mode", "is_inference_mode_enabled", "manual_seed", "default_generator",
                "Generator", "equal", "Tensor", "as_tensor", "tensor", "get_num_threads", "set_num_threads", "random",
                "nn", "special", "_C", "autograd")


class Guard:
    """Seals the worker's observers before the submission runs; reports any change after."""

    def __init__(self):
        self.modules: dict[str, object] = {}  # the hidden grader modules, by name (the worker's own refs)
        self._snapshot: dict[str, dict] = {}
        self._refused: list[str] = []
        self._reported: list[str] = []
        self._layout: Layout | None = None
        self._admit_vouches = False  # only the first admit after `resync`, before any submission code
        self.sealed = False

    # -- before the submission -----------------------------------------------------------------
    def seal(self) -> None:
        """Take the snapshot, hide the grader's modules, install the audit hook."""
        self.modules = {name: mod for name, mod in list(sys.modules.items())
                        if name.startswith(HIDDEN_PREFIXES) and name not in KEPT and mod is not None}
        _warm()
        frameless_signals()
        self._snapshot = self._take()
        self._hide()
        # The grader's functions: their code and defaults cannot be assigned by anyone (checked
        # in the hook, not compared after every call, which would read 1,000 audited attributes).
        self._grader_funcs = [self._functions_of(self._snapshot)]  # a cell: `resync` may widen it
        sys.addaudithook(self._make_hook())
        self.sealed = True

    def resync(self) -> None:
        """In a worker forked from the process that sealed this guard (the zygote, so that every
        worker shares the snapshot instead of taking its own): take the snapshot again if the
        worker's own set-up changed what it holds (pieces of earlier exercises imported, the
        fence's state), so that none of that counts as the submission's doing. Call it last
        before the submission's first line."""
        self._admit_vouches = True
        watched = self._watched
        if self._layout is not None and self._layout.modules_untouched():
            new = []  # nothing imported since the zygote's check (and no module entry read, or copied)
        else:
            new = [n for n, m in list(sys.modules.items())
                   if (n == "grader" or n.startswith("grader.")) and m is not None and n not in watched]
        if not new and not self.check():
            return
        self._reported.clear()
        self._snapshot = self._take()
        self._layout = None  # laid out again at the next check
        self._grader_funcs[0] = self._functions_of(self._snapshot)

    def admit(self, name: str, module) -> None:
        """`sys.modules[name] = module` for the submission's own module, before its code runs,
        keeping what the tags vouch for: adding a name that is not there changes no module the
        check watches, so if `sys.modules` was untouched since it was verified it still is, and
        the check after the import compares it in full only if the import itself changed it
        (about 640 copied pages a worker otherwise). A name already there is set without it.

        Only the first call after `resync` vouches, and only for a plain `str`: then no code of
        the submission's has run, so no key in `sys.modules` is one of its own (a key whose
        `__eq__` runs during this very insertion could change a watched entry unseen), and a
        new name is never watched: a caller gains nothing by it."""
        layout, first = self._layout, self._admit_vouches
        self._admit_vouches = False
        vouch = (first and layout is not None and type(name) is str and name not in sys.modules
                 and name not in self._snapshot.get("sys.modules", {}) and layout.modules_untouched())
        sys.modules[name] = module
        if vouch:
            layout.vouch_modules()

    @staticmethod
    def _functions_of(snapshot: dict) -> frozenset:
        return frozenset(kept[0] for before in snapshot.values() for kept in before.values() if type(kept) is _Func)

    def probe(self, spec: str):
        """`"ex03.count_params_of"` -> the function, from the worker's own references."""
        module_name, _, func_name = spec.rpartition(".")
        module = self.modules.get(f"grader.probes.{module_name}")
        if module is None:
            raise LookupError(f"no probe module grader.probes.{module_name}")
        return getattr(module, func_name)

    def _spaces(self) -> dict:
        """Every namespace whose bindings the observers rely on, by a name for the report."""
        import builtins

        spaces = dict(self.modules)
        for name, mod in list(sys.modules.items()):
            if (name == "grader" or name.startswith("grader.")) and mod is not None:
                spaces.setdefault(name, mod)
        spaces.update(_torch_namespaces())
        spaces["builtins"] = builtins
        for name, mod in list(spaces.items()):
            if not name.startswith("grader"):
                continue
            for attr, value in _attrs(mod).items():  # classes the grader defined: their methods too
                if isinstance(value, type) and str(getattr(value, "__module__", "")).startswith("grader"):
                    spaces.setdefault(f"{name}.{attr}", value)
        return spaces

    def _state(self) -> dict:
        """Every watched binding. Functions of the grader carry their code and defaults; the
        rest (torch's, builtins) is compared by identity alone: assigning a `__code__` is
        refused by the audit hook."""
        state = {}
        for name, space in self._watched.items():
            attrs = _attrs(space)
            state[name] = {k: _fingerprint(v) if k not in _FILLED_AS_IT_RUNS else v for k, v in attrs.items()} \
                if name.startswith("grader") else attrs
        state["sys.modules"] = dict(sys.modules)
        state["sys.meta_path"] = dict(enumerate(sys.meta_path))
        state["sys.path_hooks"] = dict(enumerate(sys.path_hooks))
        return state

    def _take(self) -> dict:
        self._watched = self._spaces()
        # torch's own objects, kept: torch rebinds a few itself on a lazy import (torch._dynamo
        # wraps torch.manual_seed), which is not a change of what the observers rely on.
        self._originals = {name: _attrs(space) for name, space in self._watched.items() if not name.startswith("grader")}
        return self._state()

    def _hide(self) -> None:
        for name in self.modules:
            sys.modules.pop(name, None)
        for name in self.modules:
            parent_name, _, child = name.rpartition(".")
            parent = sys.modules.get(parent_name)
            if parent is not None and getattr(parent, child, None) is self.modules[name]:
                try:
                    delattr(parent, child)
                except AttributeError:
                    pass
        hidden = {id(m) for m in self.modules.values()}
        for name, mod in list(sys.modules.items()):  # `import grader.sandbox.wire as wire` elsewhere in the grader
            if not (name.startswith("grader") or name == "__main__"):
                continue
            for attr, value in list(_attrs(mod).items()):
                if id(value) in hidden:
                    try:
                        delattr(mod, attr)
                    except (AttributeError, TypeError):
                        pass
        # What was hidden is no longer expected where it was.
        for name in self.modules:
            self._snapshot["sys.modules"].pop(name, None)
        for name, space in self._watched.items():
            if name in self.modules:
                continue
            present = _attrs(space)
            for attr in [a for a in self._snapshot.get(name, {}) if a not in present]:
                self._snapshot[name].pop(attr)

    def _make_hook(self):
        refused = self._refused
        busy = [False]
        get_frame = sys._getframe
        trusted_dirs = trusted_code_dirs()
        verdicts: dict[str, bool] = {}

        def trusted(name: str) -> bool:
            """Is code from file `name` the interpreter's, a library's or the grader's? Anything
            else (the submission's files, a module it wrote to its working folder, code it
            compiled from a string) counts as the submission's."""
            known = verdicts.get(name)
            if known is None:
                known = verdicts[name] = name.startswith("<frozen ") or name.startswith(trusted_dirs)
            return known

        def by_submission(depth: int = 2) -> bool:
            """Did the submission's own code ask (directly, or through inspect, ctypes, …)?"""
            frame = get_frame(depth)  # 0: here, 1: the hook, 2: whoever raised the event
            for _ in range(32):
                if frame is None:
                    return False
                name = frame.f_code.co_filename
                if not trusted(name):
                    return True
                if not any(agent in name for agent in _AGENTS):
                    return False  # a library's own use (torch, typing, collections, the grader)
                frame = frame.f_back
            return False

        def unmarshal_by_submission() -> bool:
            """marshal.loads: importlib reading a cached module of a library is its own doing;
            the submission loading code objects (with whatever file name they claim) is not."""
            frame = get_frame(2)
            if frame is not None and frame.f_code.co_name == "_compile_bytecode" and trusted(frame.f_code.co_filename):
                local = frame.f_locals
                if local.get("source_path") is not None or trusted(str(local.get("bytecode_path") or "")):
                    return False
            return by_submission(3)

        def refuse(what: str):
            refused.append(what)
            raise PermissionError(f"评分进程不允许：{what} / not allowed while grading: {what}")

        hooked = frozenset(_REFUSED_EVENTS) | {"object.__getattr__", "object.__setattr__", "import", "open", "compile",
                                                "code.__new__", "marshal.loads"}

        frame_attributes = frozenset(_FRAME_ATTRIBUTES)
        grader_funcs = self._grader_funcs

        def hook(event, args):
            if event not in hooked or busy[0]:  # first: every audited event comes here (id() too)
                return
            if event == "object.__getattr__" and args[1] not in frame_attributes:
                return  # the common case (a function's __code__ read): out at once
            busy[0] = True
            try:
                if event in _REFUSED_EVENTS:
                    if by_submission():
                        refuse(_REFUSED_EVENTS[event])
                elif event == "object.__getattr__":
                    if len(args) > 1 and args[1] in _FRAME_ATTRIBUTES and by_submission():
                        refuse(f".{args[1]} (frame inspection)")
                elif event == "object.__setattr__":
                    if len(args) > 1 and args[1] in _FUNC_PARTS and type(args[0]) is FunctionType \
                            and args[0] in grader_funcs[0]:
                        refuse(f"assigning {args[1]} of the grader's {args[0].__qualname__}")
                    elif len(args) > 1 and args[1] in ("__code__", "__globals__", "__closure__") and by_submission():
                        refuse(f"assigning {args[1]}")
                elif event == "import":
                    name = str(args[0]) if args else ""
                    if (name == "grader" or name.startswith("grader.")) and name not in ALLOWED_GRADER_MODULES \
                            and by_submission():
                        refuse(f"import {name} (the grader's modules are not for submissions)")
                elif event == "open":
                    path = str(args[0]) if args else ""
                    if raw_memory_path(path) and by_submission():
                        refuse(f"open {path}")
                elif event in ("compile", "code.__new__"):
                    # Code that claims a library's file name would pass for the library's own.
                    filename = args[1] if len(args) > 1 else None
                    caller = get_frame(1).f_code.co_filename  # importlib compiling a module file it found
                    if isinstance(filename, str) and trusted(filename) and not caller.startswith("<frozen importlib") \
                            and by_submission():
                        refuse(f"{'compile' if event == 'compile' else 'a code object'} named {filename} "
                               "(code posing as a library's)")
                elif event == "marshal.loads":
                    if unmarshal_by_submission():
                        refuse("marshal.loads (loading code objects)")
            finally:
                busy[0] = False

        return hook

    def _torch_rewrap(self, space: str, key: str) -> bool:
        """Is the new binding torch's own wrapper around the original (every layer torch's code)?"""
        original = self._originals.get(space, {}).get(key)
        value = _attrs(self._watched[space]).get(key)
        torch_dir = _torch_dir()
        for _ in range(8):
            if value is original:
                return True
            code = getattr(value, "__code__", None)
            if code is None or torch_dir is None or not code.co_filename.startswith(torch_dir):
                return False
            value = getattr(value, "__wrapped__", None)
        return False

    def _changed_in(self, space: str) -> list[str]:
        """Name what moved in `space` against the snapshot (the slow path, after a fast miss)."""
        attrs = _attrs(self._watched[space])
        found = []
        for key, kept in self._snapshot[space].items():
            if key not in attrs:
                found.append(f"removed: {space}.{key}")
            elif not _still(attrs[key], kept) and not self._torch_rewrap(space, key):
                found.append(f"changed: {space}.{key}")
        return found

    # -- after every call ----------------------------------------------------------------------
    def check(self, thorough: bool = False) -> list[str]:
        """What was refused or changed since `seal()` (sticky: a tampered worker stays tampered).

        `thorough` (after the import) also compares every grader function's code and defaults,
        which the audit hook refuses to let anyone assign.

        When nothing moved (the common case) this reads the watched dicts' version tags, about
        20 µs, touching none of their values (`grader.sandbox.bindings.Versions`); after a
        change, a few passes at C speed (`Layout`); only then does it look namespace by
        namespace, to name what moved."""
        if not self.sealed:
            return []
        if self._layout is None:
            self._layout = Layout(self._snapshot, self._watched)
        layout = self._layout
        found = [f"refused: {what}" for what in self._refused]
        if not layout.modules_same():
            before = self._snapshot["sys.modules"]
            found += [f"changed: sys.modules[{k!r}]" for k, mod in before.items() if sys.modules.get(k) is not mod]
        for name in ("sys.meta_path", "sys.path_hooks"):
            if not _all_same(tuple(getattr(sys, name[4:])), tuple(self._snapshot[name].values())):
                found.append(f"changed: {name}")
        if not layout.bindings_same():
            moved = [item for space in self._snapshot if not space.startswith("sys.") for item in self._changed_in(space)]
            found += moved
            if not moved:  # only torch's own re-wrapping (a lazy import): the fast path takes it from now on
                layout.accept_bindings()
        if thorough:
            found += layout.functions_changed()
        if not layout.contents_same():
            found += [f"changed: {space}.{key}" for space, before in self._snapshot.items() if not space.startswith("sys.")
                      for key, kept in before.items() if type(kept) is _Held and not _still(kept[0], kept)]
        for item in found:
            if item not in self._reported:
                self._reported.append(item)
        return list(self._reported[:20])


__all__ = ["Guard", "ALLOWED_GRADER_MODULES"]
