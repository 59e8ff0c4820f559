"""The judge's own copy of a submission's source: the exercise's file and the submission's
modules it imports, as text, read in the judge and never run.

What a check may judge besides the submission's outputs is this reading (grader.judge.uses:
which names a function reaches; grader.judge.scan: what a person should look at). It comes
from the folder (`from_files`, the bytes `grader.sandbox.intake` read, no link followed), from
a module's own file (`of_module`: the reference, a file loaded in the judge), or from a
notebook's cells (`of_namespace`).

A submission's own module is a top-level `*.py` of the folder; what a file imports of them is
followed, however indirectly (`closure`): their code runs in the exercise's worker too.

>>> src = SubmissionSource({"ex02_nll.py": "from nethelp import lse\\n", "nethelp.py": "X = 1\\n",
...                         "unused.py": ""}, "ex02_nll.py")
>>> src.closure()
['ex02_nll.py', 'nethelp.py']
>>> src.module_of("nethelp.py")
'nethelp'
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
import types
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SubmissionSource", "imported_modules", "literal_import", "parse"]


def _cell_family(filename: str) -> str:
    """Which kernel's cells a code file name belongs to: ipykernel's folder
    (/tmp/ipykernel_812/), or the numbered name's stem (`<ipython-input-3-…>`: `<ipython-input-`)."""
    if filename.startswith("<"):
        return re.sub(r"\d.*", "", filename)
    return os.path.dirname(filename)


def parse(text: str | bytes, name: str) -> ast.Module | None:
    """The file's syntax tree; None for what cannot be read (a syntax error is the checks'
    business: the import fails in the worker)."""
    try:
        return ast.parse(text, filename=name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def imported_modules(tree: ast.AST) -> set[str]:
    """The top-level module names a tree imports by name: `import a.b`, `from a import c`,
    `importlib.import_module("a")` and `__import__("a")` all give {"a"}."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif (named := literal_import(node)) is not None:
            found.add(named.split(".")[0])
    return found


def literal_import(node: ast.AST) -> str | None:
    """The module a call imports by a literal name (`importlib.import_module("a.b")`, `__import__("a")`), else None."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = node.args[0]
    if callee in ("import_module", "__import__") and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


@dataclass
class SubmissionSource:
    """`files`: file name -> text (or bytes); `main`: the exercise's file. `cells` (a notebook):
    file names that together make one module, the exercise's."""

    files: dict
    main: str
    cells: tuple[str, ...] = ()
    _trees: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- where a reading comes from

    @classmethod
    def from_files(cls, files: dict, module: str) -> "SubmissionSource":
        """The submission folder's files as read (name -> bytes), graded as `module`."""
        return cls(dict(files), f"{module}.py")

    @classmethod
    def of_module(cls, module: types.ModuleType | None) -> "SubmissionSource":
        """A module loaded in the judge from a file (the reference, a test's submission): its
        file and the files beside it, read when a file of the closure imports them. A module
        with no file of its own (a mistake's variant reads as the file it was made from) or
        none at all reads as empty."""
        path = getattr(module, "__file__", None) if module is not None else None
        if not isinstance(path, str) or not path.endswith(".py") or not os.path.isfile(path):
            return cls({}, "")
        folder, files, todo = Path(path).parent, {}, [Path(path).name]
        while todo:  # only what the file imports, however indirectly, is read
            name = todo.pop(0)
            if name in files or not (folder / name).is_file():
                continue
            files[name] = (folder / name).read_bytes()
            tree = parse(files[name], name)
            todo += [f"{m}.py" for m in sorted(imported_modules(tree))] if tree is not None else []
        return cls(files, Path(path).name)

    @classmethod
    def of_namespace(cls, module: types.ModuleType) -> "SubmissionSource":
        """A notebook's namespace: every cell the kernel ran beside those that define its
        functions and classes (the kernel keeps each cell's text in the line cache), read whole,
        the cells making one module together (an alias bound in one cell, used in another)."""
        families = set()
        for value in list(vars(module).values()):
            code = getattr(value, "__code__", None)
            if code is None and inspect.isclass(value):
                code = next((getattr(v, "__code__", None) for v in vars(value).values()
                             if getattr(v, "__code__", None) is not None), None)
            if code is not None and getattr(value, "__module__", None) == module.__name__:
                families.add(_cell_family(code.co_filename))
        cells = {name: "".join(linecache.getlines(name)) for name in sorted(linecache.cache)
                 if _cell_family(name) in families}
        names = tuple(name for name, text in cells.items() if text)
        return cls({name: cells[name] for name in names}, names[0] if names else "", cells=names)

    # ---------------------------------------------------------------- reading it

    def tree(self, name: str) -> ast.Module | None:
        if name not in self._trees:
            text = self.files.get(name)
            self._trees[name] = None if text is None else parse(text, name)
        return self._trees[name]

    def module_of(self, name: str) -> str:
        """The module a file is (a notebook's cells are all the exercise's module)."""
        return "__main__" if name in self.cells else name.removesuffix(".py")

    def files_of(self, module: str) -> list[str]:
        """The files of a module: its `*.py`, or a notebook's cells."""
        if module == "__main__" and self.cells:
            return list(self.cells)
        return [f"{module}.py"] if f"{module}.py" in self.files else []

    def is_own(self, module: str) -> bool:
        """Whether `module` is the submission's own (a file of the folder), not a library."""
        return bool(self.files_of(module))

    def closure(self) -> list[str]:
        """The exercise's file(s), then the submission's own files they import, however
        indirectly, breadth first."""
        todo = list(self.cells) or ([self.main] if self.main in self.files else [])
        seen: list[str] = []
        while todo:
            name = todo.pop(0)
            if name in seen:
                continue
            seen.append(name)
            tree = self.tree(name)
            if tree is not None:
                todo += [f for module in sorted(imported_modules(tree)) for f in self.files_of(module)]
        return seen
