"""Which names a submission's function reaches, read from its source (ast only, nothing run).

A rule about how an answer is written (ex02: no ready-made softmax, log-sum-exp or loss) is
judged on the judge's reading of the exercise's file and the submission's own modules it
imports (grader.judge.source), never on what ran in the worker: the same code scores the
same whatever it does to the worker around it.

A function reaches a name when the name is written

- in its own body (decorators and default values included): an attribute (`F.softmax`,
  `logits.softmax`, `torch.ops.aten._softmax`), a name imported (`from torch import softmax`),
  a name used unbound (`from torch.nn.functional import *`), a string that spells it where a
  name is looked up (`getattr(F, "softmax")`, `vars(F)["softmax"]`, `"aten::_softmax"`; not a
  dict key or a message), or code in a string that names it (`exec("y = F.softmax(x)")`, a
  `python -c` program);
- in anything of the submission's it refers to by name: a function, class or module-level
  value of its file (`_sm = torch.softmax` at the top), or of the submission's own modules
  it imports (`from nethelp import lse`, `nethelp.lse`, `import nethelp`), however deeply;
- at the top level of a file it reaches, outside any definition or assignment to a name
  (`torch.Tensor.exp = torch.Tensor.softmax`: it runs at import, for every function).

A name built at run time (`getattr(F, "soft" + "max")`, `exec` of a computed string) is not
read here: grader.judge.scan flags it for review, with its reason.

>>> from grader.judge.source import SubmissionSource
>>> src = SubmissionSource({"ex02_nll.py": "import torch\\n_sm = torch.softmax\\n"
...                                        "def p(z):\\n    return _sm(z, -1)\\n"
...                                        "def nll(z, y):\\n    return -p(z)[y].log()\\n"}, "ex02_nll.py")
>>> [(u.where, u.written, u.via) for u in reached(src, "nll", {"softmax"}.__contains__)]
[('ex02_nll.py:2', 'torch.softmax', ('p', '_sm'))]
>>> reached(src, "p", {"log_softmax"}.__contains__)
[]
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass
from typing import Callable

from grader.judge.source import SubmissionSource, literal_import, parse

__all__ = ["Use", "reached"]

# Calls that look an attribute or a module up by a name given as a string
LOOKUPS = {"getattr", "hasattr", "attrgetter", "methodcaller", "__getattr__", "__getattribute__", "getattr_static",
           "import_module", "__import__", "_get_operation_overload", "_dispatch_find_schema_or_throw",
           "_get_schema", "find_spec"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LONGEST_STRING = 20_000  # longer strings are data, not code
_TOP = "<top>"  # a file's top-level code outside definitions and assignments
_ALL = "<all>"  # everything a module holds (it is used whole: `import nethelp`, then `f(nethelp)`)


@dataclass(frozen=True)
class Use:
    """Where a wanted name is written: `F.softmax` on ex02_nll.py line 12, reached from the
    function through `via` (the submission's own names in between, nearest first)."""

    file: str
    line: int
    written: str
    name: str
    via: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class _Ref:
    """A binding that is (a name of) another of the submission's modules."""

    module: str
    name: str | None  # None: the module itself


class _Module:
    """One module's bindings (name -> what defines it) and top-level code, per file."""

    def __init__(self, reader: "_Reader", name: str):
        self.name = name
        self.bindings: dict[str, list] = {}
        self.tops: dict[str, list[ast.AST]] = {}
        self.stars: list[str] = []  # own modules imported with `*`
        self.methods: set[str] = set()  # names defined in its classes (`self.softmax` may be one)
        self.stored: set[str] = set()  # every name assigned or taken as an argument anywhere in it
        for file in reader.source.files_of(name):
            tree = reader.source.tree(file)
            if tree is None:
                continue
            self.tops.setdefault(file, [])
            self._collect(reader, tree.body, file)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    self.methods |= {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
                elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    self.stored.add(node.id)
                elif isinstance(node, ast.arg):
                    self.stored.add(node.arg)

    def bind(self, name: str, item) -> None:
        self.bindings.setdefault(name, []).append(item)

    def _bind_targets(self, target, file: str, value) -> bool:
        """Bind every plain name in an assignment target; False when it assigns elsewhere."""
        if isinstance(target, ast.Name):
            self.bind(target.id, (file, value))
            return True
        if isinstance(target, (ast.Tuple, ast.List)):
            return all([self._bind_targets(t, file, value) for t in target.elts])
        if isinstance(target, ast.Starred):
            return self._bind_targets(target.value, file, value)
        return False

    def _collect(self, reader: "_Reader", body: list, file: str) -> None:
        top = self.tops[file]
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bind(stmt.name, (file, stmt))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    local = alias.asname or alias.name.split(".")[0]
                    own = alias.name if alias.asname else alias.name.split(".")[0]
                    self.bind(local, _Ref(own, None) if reader.source.is_own(own) else (file, alias))
            elif isinstance(stmt, ast.ImportFrom):
                own = stmt.level == 0 and bool(stmt.module) and reader.source.is_own(stmt.module)
                for alias in stmt.names:
                    if alias.name == "*":
                        if own:
                            self.stars.append(stmt.module)
                        else:
                            top.append(alias)
                    else:
                        self.bind(alias.asname or alias.name, _Ref(stmt.module, alias.name) if own else (file, alias))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                value = stmt.value if stmt.value is not None else stmt
                if not all([self._bind_targets(t, file, value) for t in targets]):
                    top.append(stmt)  # assigns into something else: `torch.Tensor.exp = …`
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            elif isinstance(stmt, (ast.If, ast.While)):
                top.append(stmt.test)
                self._collect(reader, stmt.body + stmt.orelse, file)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                if not self._bind_targets(stmt.target, file, stmt.iter):
                    top.append(stmt.iter)
                self._collect(reader, stmt.body + stmt.orelse, file)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is None or not self._bind_targets(item.optional_vars, file, item.context_expr):
                        top.append(item.context_expr)
                self._collect(reader, stmt.body, file)
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                handlers = [h for handler in stmt.handlers for h in handler.body]
                self._collect(reader, stmt.body + handlers + stmt.orelse + stmt.finalbody, file)
            else:
                top.append(stmt)

    def resolve(self, reader: "_Reader", name: str):
        """Where a name of this module leads: its own binding, or one a `*` import brought."""
        if name in self.bindings:
            return (self.name, name)
        for star in self.stars:
            found = reader.module(star).resolve(reader, name)
            if found is not None:
                return found
        return None


class _Reader:
    def __init__(self, source: SubmissionSource, matches: Callable[[str], bool]):
        self.source = source
        self.matches = matches
        self._modules: dict[str, _Module] = {}

    def module(self, name: str) -> _Module:
        if name not in self._modules:
            self._modules[name] = _Module(self, name)
        return self._modules[name]

    # ------------------------------------------------------------ what one piece of code names

    def _tokens_match(self, text: str) -> str | None:
        return next((t for t in _IDENTIFIER.findall(text) if self.matches(t)), None)

    def _string_uses(self, node: ast.Constant, file: str, lookup: bool) -> list[Use]:
        text = node.value
        if len(text) > _LONGEST_STRING or self._tokens_match(text) is None:
            return []
        written = repr(text if len(text) <= 60 else text[:57] + "…")
        plain = not any(c.isspace() for c in text)
        if plain and (lookup or "::" in text):  # getattr(F, "softmax"), "aten::_softmax"
            return [Use(file, node.lineno, written, self._tokens_match(text))]
        tree = parse(text, file)  # code in a string: exec("…"), a `python -c` program
        if tree is None:
            return []
        inner = [u for n in ast.walk(tree) for u in self._names_in(n, file, node.lineno, in_string=True)]
        return [Use(file, node.lineno, f"{inner[0].written} (in a string)", inner[0].name)] if inner else []

    def _names_in(self, node: ast.AST, file: str, line: int, in_string: bool = False) -> list[Use]:
        """What one node names by itself (attributes, imported names, a string used as a name)."""
        if isinstance(node, ast.Attribute) and self.matches(node.attr):
            return [Use(file, getattr(node, "lineno", line) if not in_string else line, _short(node), node.attr)]
        if isinstance(node, ast.alias):
            hit = next((part for part in node.name.split(".") if self.matches(part)), None)
            return [Use(file, getattr(node, "lineno", line) if not in_string else line, f"import {node.name}", hit)] \
                if hit else []
        return []

    def direct(self, module: _Module, node: ast.AST, file: str) -> tuple[list[Use], list]:
        """The wanted names `node` writes itself, and the bindings it refers to."""
        uses, refs = [], []
        docstrings = {id(s.value) for s in ast.walk(node) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
        looked_up: set[int] = set()
        skipped: set[int] = set()  # attributes read as a name of one of the submission's modules
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                callee = _short(sub.func).rpartition(".")[2]
                if callee in LOOKUPS:
                    looked_up |= {id(a) for a in sub.args}
                named = literal_import(sub)
                if named is not None and self.source.is_own(named):  # importlib.import_module("nethelp")
                    refs.append((named, _ALL))
            elif isinstance(sub, ast.Subscript) and _is_namespace(sub.value):
                looked_up.add(id(sub.slice))  # vars(F)["softmax"], F.__dict__["softmax"]
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                bound = module.resolve(self, sub.value.id)
                target = self._ref_of(bound)
                if isinstance(target, _Ref) and target.name is None:  # nethelp.lse: that name of nethelp's
                    refs.append((target.module, sub.attr))
                    refs += [(target.module, f"{_TOP}{f}") for f in self.module(target.module).tops]
                    skipped |= {id(sub), id(sub.value)}
                elif sub.value.id in ("self", "cls") and sub.attr in module.methods:
                    skipped.add(id(sub))  # the class's own method: read with the class
        for sub in ast.walk(node):
            if id(sub) in skipped:
                continue
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                bound = module.resolve(self, sub.id)
                if bound is not None:
                    refs.append(bound)
                elif self.matches(sub.id) and sub.id not in module.stored:  # `from torch import *`
                    uses.append(Use(file, sub.lineno, sub.id, sub.id))
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in docstrings:
                uses += self._string_uses(sub, file, id(sub) in looked_up)
            else:
                uses += self._names_in(sub, file, getattr(sub, "lineno", 0))
        return uses, refs

    def _ref_of(self, bound):
        """A binding that is only a reference to another module of the submission's, or None."""
        if bound is None:
            return None
        items = self.module(bound[0]).bindings.get(bound[1], [])
        return items[0] if len(items) == 1 and isinstance(items[0], _Ref) else None

    # ------------------------------------------------------------ following the references

    def pieces(self, module_name: str, name: str) -> tuple[list, list]:
        """(nodes to read as (file, node), bindings they lead to) for one binding or pseudo-binding."""
        module = self.module(module_name)
        if name == _ALL:
            nodes = [(file, n) for file, top in module.tops.items() for n in top]
            return nodes, [(module_name, b) for b in module.bindings]
        if name.startswith(_TOP):
            file = name[len(_TOP):]
            return [(file, n) for n in module.tops.get(file, [])], []
        nodes, refs = [], []
        for item in module.bindings.get(name, []):
            if isinstance(item, _Ref):
                target = self.module(item.module)
                found = target.resolve(self, item.name) if item.name else None
                refs.append(found or (item.module, _ALL))
                refs += [(item.module, f"{_TOP}{f}") for f in target.tops]
            else:
                nodes.append(item)
                refs.append((module_name, f"{_TOP}{item[0]}"))  # its file's top level runs first
        return nodes, refs

    def reached(self, start: tuple[str, str]) -> list[Use]:
        parents: dict[tuple[str, str], tuple[str, str] | None] = {start: None}
        queue, found = deque([start]), []
        while queue:
            here = queue.popleft()
            module = self.module(here[0])
            nodes, refs = self.pieces(*here)
            for file, node in nodes:
                uses, more = self.direct(module, node, file)
                found += [Use(u.file, u.line, u.written, u.name, _path(parents, here, start)) for u in uses]
                refs += more
            for ref in refs:
                if ref not in parents and (ref[1] in (_ALL,) or ref[1].startswith(_TOP)
                                           or ref[1] in self.module(ref[0]).bindings):
                    parents[ref] = here
                    queue.append(ref)
        return list(dict.fromkeys(found))


def _path(parents: dict, here: tuple[str, str], start: tuple[str, str]) -> tuple[str, ...]:
    """The submission's own names between the function and `here`, nearest the function first."""
    names = []
    while here is not None and here != start:
        if not here[1].startswith(("<",)):
            names.append(here[1])
        here = parents.get(here)
    return tuple(reversed(names))


def _is_namespace(node: ast.AST) -> bool:
    """An expression that is a namespace's dict: `vars(x)`, `x.__dict__`, `globals()`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    return isinstance(node, ast.Call) and _short(node.func).rpartition(".")[2] in ("vars", "globals", "locals")


def _short(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - a node unparse cannot render: named by its kind
        return type(node).__name__
    return text if len(text) <= 60 else text[:57] + "…"


def reached(source: SubmissionSource, function: str, matches: Callable[[str], bool]) -> list[Use]:
    """Every wanted name (`matches(name)`) the exercise's `function` reaches, in the order
    found (nearest first); [] when the file does not define it (the worker says so)."""
    if not source.files or not source.main:
        return []
    reader = _Reader(source, matches)
    main = source.module_of(source.main)
    start = reader.module(main).resolve(reader, function)
    return reader.reached(start) if start is not None else []
