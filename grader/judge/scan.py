"""Read a submission before running it: what only a tamperer needs, found in its syntax tree.

Runs in the judge's process, on the bytes `grader.sandbox.intake` read (no link followed),
with `ast` only: nothing of the submission is executed. A finding never costs a point: it
puts a **review mark** with its reasons on the submission, shown in every report format, so
that a person looks at the file.

Flagged:

- importing a grader module other than the documented `grader.tinygpt`;
- `sys.modules`, `gc`, `ctypes`, `inspect`, frame access (`sys._getframe`, `f_back`,
  `tb_frame`, `gi_frame`, `f_globals`, `f_locals`), `sys.settrace` / `setprofile`,
  `sys.meta_path` / `path_hooks` (import hooks), `sys.addaudithook`;
- the attributes that reach into a function's or object's insides (`__globals__`,
  `__closure__`, `__code__`, `__builtins__`, `__subclasses__`);
- assigning into `builtins` or into another module's attributes (`torch.softmax = …`,
  `setattr(F, "softmax", …)`);
- `exec`, `eval`, `compile`, `__import__`, `importlib.import_module` on a string that is not
  a literal;
- loading a module from a file path or building code from bytes (`spec_from_file_location`,
  `SourceFileLoader`, `runpy`, `marshal`, `types.FunctionType`): a reference copied in from
  wherever another checkout leaves one readable; `exec` under another name (`run = exec`,
  `builtins.exec`), `getattr` with a built-up name on anything, `sys` reached as `os.sys`;
- a string that names a path into the kit (`solutions/`, `/proc/self/cwd`, `grader/per_exercise`, …);
- in a file whose answers are judged by how they are written (ex02's forbidden APIs, read by
  grader.judge.uses) and the submission's modules it imports: whatever hides a name from that
  reading, i.e. getattr, vars, setattr passed as values, `vars(…)`, `__dict__`, attrgetter,
  methodcaller or `__getattribute__` on a name built at run time, and another process's code.

>>> scan_source("import gc\\nx = gc.get_objects()\\n", "ex01_windows.py")
['ex01_windows.py:1: imports gc (the garbage collector: walking objects)', 'ex01_windows.py:2: gc.get_objects (the garbage collector: walking objects)']
>>> scan_source("import torch\\ndef f(x):\\n    return torch.softmax(x, -1)\\n", "ex02_nll.py")
[]
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from grader.judge.source import SubmissionSource

ALLOWED_GRADER = {"grader.tinygpt"}

_MODULES = {
    "gc": "the garbage collector: walking objects",
    "ctypes": "raw memory access",
    "inspect": "frame inspection",
    "traceback": "frame inspection",
    "runpy": "running code from a file path",
    "zipimport": "importing code from an archive",
    "marshal": "code objects from bytes",
}
# Loading a module from a path: what copying in a reference readable somewhere else takes
# (an honest exercise imports by name, `from ex08_get_batch import get_batch`).
_LOADERS = {"spec_from_file_location", "spec_from_loader", "SourceFileLoader", "SourcelessFileLoader",
            "ExtensionFileLoader", "FileLoader", "load_source", "run_path", "run_module", "FunctionType", "CodeType",
            "module_from_spec", "exec_module", "load_module", "import_module"}
_LOADING = "loading code from a file path or from code objects"
_SYS_ATTRS = {
    "modules": "sys.modules", "_getframe": "frame inspection", "_current_frames": "frame inspection",
    "settrace": "tracing", "setprofile": "profiling", "meta_path": "import hooks", "path_hooks": "import hooks",
    "addaudithook": "audit hooks", "exc_info": "frame inspection (traceback)", "_getframemodulename": "frame inspection",
    "path": "where imports come from",
}
_INSIDES = {
    "f_back": "frame inspection", "f_globals": "frame inspection", "f_locals": "frame inspection",
    "tb_frame": "frame inspection", "gi_frame": "frame inspection", "cr_frame": "frame inspection",
    "f_code": "frame inspection", "tb_next": "frame inspection",
    "__globals__": "a function's globals", "__closure__": "a function's closure", "__code__": "a function's code",
    "__builtins__": "the builtins", "__subclasses__": "walking classes", "__self__": "a bound method's owner",
}
_DYNAMIC = {"exec", "eval", "compile", "__import__"}
# A rule read from the source (ex02: no ready-made softmax, grader.judge.uses) sees the names
# written; what builds a name at run time hides one from it. In these files, and the
# submission's own modules they import, such code is named for review.
HIDES_NAME = "hides a name from the judge's reading of the forbidden APIs"
_RULED_FILES = ("ex02_nll.py",)
# What reads an attribute by a name given as a value, as getattr does
_BY_NAME = {"__getattribute__", "attrgetter", "methodcaller", "getattr_static"}
_READERS = {"getattr", "vars", "setattr"}  # called directly they are read above; as values, not
# ...and another process, whose code the reading may not follow (a program given as a string).
_ELSEWHERE = {"concurrent", "multiprocessing", "subprocess"}
# The signal module: a handler is called with the running frame (the worker withholds it).
_SIGNALS = {"signal", "_signal"}
_KIT_PATH = re.compile(r"/proc/(self|\d+|thread-self)/(cwd|root|fd|mem|environ|maps)|(^|/)solutions(/|$)"
                       r"|(^|/)grader/(per_exercise|checks|mistakes|pieces|probes|sandbox|earlier)(/|$)|answers\.bin|(^|/)\.git(/|$)")


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, name: str, ruled: bool | None = None):
        self.name = name
        self.ruled = name in _RULED_FILES if ruled is None else ruled
        self.imports: set[str] = set()  # the top-level module names imported (by name, statically)
        self.found: list[str] = []
        self.modules: dict[str, str] = {}  # local name -> module it is bound to (import x as y)
        self.called: set[int] = set()  # the ids of the names called directly (`exec(...)`, not `run = exec`)

    def flag(self, node, text: str) -> None:
        self.found.append(f"{self.name}:{getattr(node, 'lineno', 0)}: {text}")

    # imports --------------------------------------------------------------------------------
    def _imported(self, node, module: str) -> None:
        top = module.split(".")[0]
        self.imports.add(top)
        if top in _SIGNALS:
            self.flag(node, f"imports {module} (signal handlers: frames)")
        elif top == "grader" and module not in ALLOWED_GRADER:
            self.flag(node, f"imports {module} (only grader.tinygpt of the grader is for submissions)")
        elif top in _MODULES:
            self.flag(node, f"imports {module} ({_MODULES[top]})")
        elif top in _ELSEWHERE and self.ruled:
            self.flag(node, f"imports {module} (code run in another process: {HIDES_NAME})")

    def visit_Import(self, node):
        for alias in node.names:
            self._imported(node, alias.name)
            self.modules[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level == 0:
            if module == "grader":
                for alias in node.names:
                    self._imported(node, f"grader.{alias.name}")
            else:
                self._imported(node, module)
            if module == "sys":
                for alias in node.names:
                    if alias.name in _SYS_ATTRS:
                        self.flag(node, f"from sys import {alias.name} ({_SYS_ATTRS[alias.name]})")
        for alias in node.names:
            if alias.name in _LOADERS:
                self.flag(node, f"from {module} import {alias.name} ({_LOADING})")
            elif alias.name in _DYNAMIC:
                self.flag(node, f"from {module} import {alias.name} (runs code given as a string, under another name)")
            self.modules[alias.asname or alias.name] = f"{module}.{alias.name}"
        self.generic_visit(node)

    # attribute access --------------------------------------------------------------------------
    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name):
            bound = self.modules.get(node.value.id, "")
            top = bound.split(".")[0]
            if bound == "sys" and node.attr in _SYS_ATTRS:
                self.flag(node, f"sys.{node.attr} ({_SYS_ATTRS[node.attr]})")
            elif top in _MODULES and not isinstance(node.ctx, ast.Store):
                self.flag(node, f"{bound}.{node.attr} ({_MODULES[top]})")
        if node.attr in _INSIDES:
            self.flag(node, f".{node.attr} ({_INSIDES[node.attr]})")
        elif node.attr in _LOADERS:
            self.flag(node, f".{node.attr} ({_LOADING})")
        elif node.attr in _DYNAMIC and (node.attr in ("exec", "__import__") or (
                isinstance(node.value, ast.Name) and self.modules.get(node.value.id) == "builtins")):
            self.flag(node, f".{node.attr} (runs code given as a string)")  # builtins.exec; not model.eval()
        elif node.attr == "sys" and _dotted(node.value):  # os.sys: sys where the scan does not look for it
            self.flag(node, f"{_dotted(node.value)}.sys (sys reached through another module)")
        if node.attr == "__dict__" and self.ruled:
            self.flag(node, f".{node.attr} ({HIDES_NAME})")
        self.generic_visit(node)

    # assignments into other modules -------------------------------------------------------------
    def _target(self, target) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element)
            return
        if isinstance(target, ast.Attribute):
            base = _dotted(target.value)
            if base and base.split(".")[0] in self.modules:
                self.flag(target, f"assigns {base}.{target.attr} (changes another module)")
        if isinstance(target, ast.Subscript):
            base = _dotted(target.value)
            if base and (base.split(".")[0] in self.modules or base in ("__builtins__",)):
                self.flag(target, f"assigns into {base}[…] (changes another module's contents)")

    def visit_Assign(self, node):
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    # calls ------------------------------------------------------------------------------------
    def visit_Name(self, node):
        if node.id in _DYNAMIC and id(node) not in self.called and isinstance(node.ctx, ast.Load):
            self.flag(node, f"{node.id} under another name (runs code given as a string)")  # run = exec
        elif self.ruled and node.id in _READERS and id(node) not in self.called and isinstance(node.ctx, ast.Load):
            # `reduce(getattr, names, op)`: an attribute read by a name the call below cannot see
            self.flag(node, f"{node.id} passed as a value ({HIDES_NAME})")

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name):
            self.called.add(id(node.func))
        name = _dotted(node.func)
        literal = bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
        if name in _DYNAMIC and not literal:
            self.flag(node, f"{name}(…) on a computed string" + (f" ({HIDES_NAME})" if self.ruled else ""))
        elif name in ("exec", "eval", "compile"):
            self.flag(node, f"{name}(…) (runs code given as a string)")
            self._inner(node.args[0].value, node)
        elif name in _DYNAMIC and name == "__import__":
            self._imported(node, node.args[0].value)
        elif name and name.endswith("import_module"):
            if literal:
                self._imported(node, node.args[0].value)
            else:
                self.flag(node, f"{name}(…) on a computed name")
        elif name in ("setattr", "delattr") and node.args:
            base = _dotted(node.args[0])
            if base and base.split(".")[0] in self.modules:
                self.flag(node, f"{name}({base}, …) (changes another module)")
        elif name in ("getattr",) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and str(node.args[1].value) in _INSIDES:
            self.flag(node, f"getattr(…, {node.args[1].value!r}) ({_INSIDES[str(node.args[1].value)]})")
        elif name in ("getattr",) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and str(node.args[1].value) in _LOADERS | _DYNAMIC:
            self.flag(node, f"getattr(…, {node.args[1].value!r}) ({_LOADING})")
        elif name in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2 \
                and not isinstance(node.args[1], ast.Constant):
            base = _dotted(node.args[0]) or "…"
            # on anything: a module may be reached through a plain variable (`u = importlib.util`)
            why = HIDES_NAME if self.ruled else "reaching into an object by a built-up name"
            self.flag(node, f"{name}({base}, …) on a computed name ({why})")
        elif name == "vars" and node.args and self.ruled:  # on anything: `op = torch.ops…; vars(op)[…]`
            self.flag(node, f"vars({_dotted(node.args[0]) or '…'}) ({HIDES_NAME})")
        elif self.ruled and name and name.split(".")[-1] in _BY_NAME and not all(
                isinstance(arg, ast.Constant) for arg in node.args[(1 if name.endswith("__getattribute__") else 0):]):
            # getattr under other names: an attribute (`"soft" + "max"`) spelt at run time
            self.flag(node, f"{name}(…) on a computed name ({HIDES_NAME})")
        self.generic_visit(node)

    def _inner(self, source: str, node) -> None:
        """The code in a literal string given to exec/eval/compile is read like the file's own."""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return
        inner = _Scanner(f"{self.name}:{getattr(node, 'lineno', 0)} (in the string)", self.ruled)
        inner.modules = dict(self.modules)
        inner.visit(tree)
        self.found += inner.found
        self.imports |= inner.imports

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant):
            return  # a docstring or a bare string: words, not paths
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and len(node.value) < 400 and _KIT_PATH.search(node.value):
            self.flag(node, f"a path into the kit: {node.value[:60]!r}")


def _scan(source: str | bytes, name: str, ruled: bool | None = None) -> tuple[list[str], set[str]]:
    """(reasons to review one file, the top-level module names it imports)."""
    too_deep = [f"{name}: nested too deeply to be read through (an expression hundreds of levels deep)"]
    try:
        tree = ast.parse(source, filename=name)
    except (SyntaxError, ValueError):
        return [], set()  # a syntax error is the checks' business (it fails the import)
    except (RecursionError, MemoryError):  # what the scan cannot read, it cannot vouch for
        return too_deep, set()
    scanner = _Scanner(name, ruled)
    try:
        scanner.visit(tree)
    except (RecursionError, MemoryError):  # the visitor recurses per level: deep but valid Python
        return list(dict.fromkeys(scanner.found + too_deep))[:40], scanner.imports
    return list(dict.fromkeys(scanner.found))[:40], scanner.imports


def scan_source(source: str | bytes, name: str) -> list[str]:
    """Reasons to review one file (empty: nothing a tamperer needs)."""
    return _scan(source, name)[0]


def scan_files(files: dict, modules: dict[str, str]) -> dict[str, list[str]]:
    """Per exercise id: the reasons to review its file and the submission's own modules it
    imports, however indirectly (`nethelp.py` beside `ex02_nll.py`: its code runs in the
    exercise's worker, so it is read as the exercise's, ex02's rule included). `files`: the
    folder's files as read (name -> bytes); `modules` maps id -> module name.

        # files: ex02_nll.py "from nethelp import lse"; nethelp.py line 2 `vars(F)["soft" + "max"]`
        scan_files(files, {"ex02": "ex02_nll"})
        # {"ex02": ["nethelp.py:2: vars(F) (hides a name from the judge's reading of the forbidden APIs)"]}
    """
    exercise_files = {f"{module}.py" for module in modules.values()}
    out = {}
    for exercise_id, module in modules.items():
        source = SubmissionSource.from_files(files, module)
        if source.main not in files:
            continue
        ruled = source.main in _RULED_FILES
        reasons = []
        for name in source.closure():
            if name in exercise_files and name != source.main and not ruled:
                continue  # another exercise's file: its own row shows what it holds
            found, _imports = _scan(files[name], name, ruled)
            reasons += [reason for reason in found if reason not in reasons]
        if reasons:
            out[exercise_id] = reasons[:40]
    return out


def scan_folder(folder: str | Path, modules: dict[str, str]) -> dict[str, list[str]]:
    """`scan_files` on the folder's files, read with `grader.sandbox.intake` (no link followed);
    a refused folder, or a file refused alone, gives no reasons here (the worker reports the
    refusal to its checks)."""
    from grader.sandbox.intake import SubmissionRefused, read_submission

    try:
        files, _refused = read_submission(str(folder))
    except SubmissionRefused:
        return {}
    return scan_files(files, modules)


__all__ = ["HIDES_NAME", "scan_files", "scan_folder", "scan_source"]
