"""The student's stub, derived from the reference: what lies between solution markers goes.

A reference solution (`solutions/exNN_*.py`) marks what the student writes, as nbgrader does:

    def shift_pairs(tokens):
        \"\"\"… the docstring, the worked example …\"\"\"
        ### BEGIN SOLUTION
        return tokens[:-1], tokens[1:]
        ### END SOLUTION

    ### BEGIN SOLUTION 填一个 int：参数个数 / an int: the number of parameters
    ANSWER_PARAMS = 123_456_789
    ### END SOLUTION

and the stub (`exercises/exNN_*.py`) is that file with each region replaced:

- inside a function (or method): one line, `raise NotImplementedError("exNN: 在这里实现 NAME /
  implement NAME here")`, at the region's indentation (`NAME` is `Class.method` in a class);
- at module level: each name the region assigns becomes `NAME = NotImplemented  # TODO: TEXT`
  (TEXT is what follows `BEGIN SOLUTION` on the marker's line); anything else there (a helper
  the reference uses) is left out.

`grade check` proves every stub is exactly what `derive_stub` gives (`stub_differences`).

    >>> src = 'def f(x):\\n    \"\"\"Twice x.\"\"\"\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n'
    >>> print(derive_stub(src, "ex99"), end="")
    def f(x):
        \"\"\"Twice x.\"\"\"
        raise NotImplementedError("ex99: 在这里实现 f / implement f here")
"""

from __future__ import annotations

import ast
import difflib
import re

BEGIN = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION\b[ \t]*(?P<text>.*?)\s*$")
END = re.compile(r"^[ \t]*### END SOLUTION\s*$")


class MarkerError(ValueError):
    """Solution markers that do not pair up, or a region in a place it cannot stand for."""


def regions(source: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, indentation, text) of each marked region, 1-based, markers included.

    >>> regions("### BEGIN SOLUTION note\\nA = 1\\n### END SOLUTION\\n")
    [(1, 3, '', 'note')]
    """
    found, opened = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if opened is not None:
                raise MarkerError(f"line {number}: BEGIN SOLUTION inside the region opened at line {opened[0]}")
            opened = (number, begin.group("indent"), begin.group("text"))
        elif end:
            if opened is None:
                raise MarkerError(f"line {number}: END SOLUTION without a BEGIN SOLUTION")
            found.append((opened[0], number, opened[1], opened[2]))
            opened = None
    if opened is not None:
        raise MarkerError(f"line {opened[0]}: BEGIN SOLUTION is never ended")
    return found


def _enclosing_functions(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and method."""
    spans = []

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                spans.append((child.lineno, child.end_lineno, name))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return spans


def _assigned_names(lines: list[str]) -> list[str]:
    """The names a module-level region assigns, in order (helpers and imports are not stubbed)."""
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError as err:
        raise MarkerError(f"a module-level region that is not whole statements: {err.msg}") from None
    names = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def derive_stub(source: str, exercise_id: str) -> str:
    """The stub for a reference's `source` (module docstring): each marked region replaced."""
    tree = ast.parse(source)
    functions = _enclosing_functions(tree)
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    cursor = 1
    for first, last, indent, text in regions(source):
        out += lines[cursor - 1:first - 1]
        inside = [name for start, end, name in functions if start < first <= end]
        if inside:
            name = inside[-1]  # the innermost
            out.append(f'{indent}raise NotImplementedError("{exercise_id}: 在这里实现 {name} / implement {name} here")\n')
        else:
            body = [line.rstrip("\n") for line in lines[first:last - 1]]
            comment = f"  # TODO: {text}" if text else ""
            stubbed = [f"{indent}{name} = NotImplemented{comment}\n" for name in _assigned_names(body)]
            out += stubbed
            if not stubbed:  # a helper left out: the blank lines that set it apart go with it
                while last < len(lines) and not lines[last].strip():
                    last += 1
        cursor = last + 1
    out += lines[cursor - 1:]
    return "".join(out)


def strip_markers(source: str) -> str:
    """The reference as it runs, without its marker lines (what the nbgrader answer cell shows
    in a solution, and what a student release never holds)."""
    return "".join(line for line in source.splitlines(keepends=True) if not (BEGIN.match(line) or END.match(line)))


def stub_differences(stub: str, reference: str, exercise_id: str, stub_name: str = "stub") -> list[str]:
    """The lines where a stub differs from its derivation (a unified diff), or [] when equal."""
    derived = derive_stub(reference, exercise_id)
    if stub == derived:
        return []
    return list(difflib.unified_diff(derived.splitlines(), stub.splitlines(), "derived from the reference",
                                     stub_name, lineterm="", n=1))


__all__ = ["derive_stub", "regions", "strip_markers", "stub_differences", "MarkerError"]
