"""Mutants of a reference solution: the same file with one small, mechanical change.

A mutant is what a student's bug looks like: a comparison reversed, a number off by one, a
slice bound moved, the wrong dimension, a call left out. The generic operators are
cosmic-ray's (`cosmic_ray.operators`: arithmetic, comparisons, unary operators, booleans,
numbers ±1, `break`/`continue`, loops with no iteration); the ones particular to tensor
code are `grader.build.tensor_mutations`. Only the code a student writes is mutated
(`student_lines`): what the reference's solution regions hold, not the docstrings and
signatures around them, not the module's constants (hand answers, checked on their own).

    >>> source = "def f(t):\\n    ### BEGIN SOLUTION\\n    return t[:-1]\\n    ### END SOLUTION\\n"
    >>> [f"{m.before} -> {m.after}  ({m.operator})" for m in mutants_of(source)][:2]
    ['return t[:-1] -> return t[1:]  (ShiftByOne)', 'return t[:-1] -> return t[:]  (ShiftByOne)']

Two operators that write the same program give one mutant (the first operator's name is
kept: the tensor ones come first), and so do `-0` and `0`.
"""

from __future__ import annotations

import ast
import difflib
import io
import itertools
import tokenize
import types
import warnings
from dataclasses import dataclass
from operator import invert, neg, pos

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code

from grader.build.stubs import regions
from grader.build.tensor_mutations import OPERATORS as TENSOR_OPERATORS


@dataclass(frozen=True)
class Mutant:
    """One mutant: where (`line`, 1-based), the line before and after, the operator, the code."""

    operator: str
    line: int
    before: str
    after: str
    source: str

    def shown(self, where: str) -> str:
        """`ex01 solutions/ex01_windows.py:12  head = seq[:-1] -> head = seq[1:]  (ShiftByOne)`"""
        return f"{where}:{self.line}  {self.before} -> {self.after}  ({self.operator})"


def student_lines(source: str) -> frozenset[int]:
    """The lines a student writes: those inside the reference's solution regions
    (`grader.build.stubs.regions`), but the module's constants there (hand answers, checked on
    their own).

        def f(x):
            \"\"\"Twice x.\"\"\"           # not a site: the docstring is the stub's too
            ### BEGIN SOLUTION
            return 2 * x           # a site
            ### END SOLUTION
        ### BEGIN SOLUTION an int
        ANSWER = 3                 # not a site: a hand answer
        ### END SOLUTION
    """
    constants = {line for node in ast.parse(source).body if isinstance(node, (ast.Assign, ast.AnnAssign))
                 for line in range(node.lineno, node.end_lineno + 1)}
    return frozenset(line for first, last, _, _ in regions(source) for line in range(first + 1, last)
                     if line not in constants)


# cosmic-ray's binary operators in two families; a mutant crossing from one to the other
# (`+` into `<<`) is a TypeError on a float and no student's bug. Nor is a product turned into
# a power: `12 * C ** 2` as `12 ** C ** 2` is a number of millions of digits, computed in C
# where no time limit reaches it.
_ARITHMETIC = ("Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow")
_BITWISE = ("RShift", "LShift", "BitOr", "BitAnd", "BitXor")
_LEFT_OUT = ({f"ReplaceBinaryOperator_{a}_{b}" for family, other in ((_ARITHMETIC, _BITWISE), (_BITWISE, _ARITHMETIC))
              for a, b in itertools.product(family, other)}
             | {f"ReplaceBinaryOperator_{a}_Pow" for a in _ARITHMETIC + _BITWISE})


def generic_operators() -> list[tuple[str, object]]:
    """cosmic-ray's core operators, by name, but those that need arguments (VariableReplacer,
    VariableInserter: a chosen variable and a random draw) and the binary ones left out above."""
    from cosmic_ray.plugins import get_operator, operator_names

    chosen = []
    for full_name in operator_names():
        name = full_name.rpartition("/")[2]
        operator = get_operator(full_name)
        if operator.arguments() or name in _LEFT_OUT:
            continue
        chosen.append((name, operator()))
    # NumberReplacer first: when `~1` and `- 2` are one program, the survivor reads `- 2`
    return sorted(chosen, key=lambda named: named[0] != "NumberReplacer")


def operators() -> list[tuple[str, object]]:
    """Every operator, the tensor ones first (their names win when two write the same mutant)."""
    return [(op.__name__, op()) for op in TENSOR_OPERATORS] + generic_operators()


def mutants_of(source: str) -> list[Mutant]:
    """Every mutant of `source` at the lines a student writes, in the order of the operators."""
    sites = student_lines(source)
    original = _program(source)
    seen = {original}
    lines = _code_lines(source)
    nodes = list(ast_nodes(get_ast(source)))  # read only: each mutant is made from the source again
    found = []
    for name, operator in operators():
        positions = [pos for node in nodes for pos in operator.mutation_positions(node)]
        for occurrence, ((line, _), _) in enumerate(positions):
            if line not in sites:
                continue
            mutated = mutate_code(source, operator, occurrence)
            program = _program(mutated) if mutated is not None else None
            if program is None or program in seen:
                continue
            seen.add(program)
            found.append(_described(name, lines, mutated))
    return found


def _described(operator: str, lines: list[str], mutated: str) -> Mutant:
    after = _code_lines(mutated)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, after, autojunk=False).get_opcodes():
        if tag != "equal":
            return Mutant(operator, i1 + 1, " / ".join(lines[i1:i2]), " / ".join(after[j1:j2]), mutated)
    raise ValueError("a mutant with no changed line")


def _code_lines(source: str) -> list[str]:
    """Each line stripped of its comment and its indentation (comments say the same before and after)."""
    lines = source.splitlines()
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    return [line[:comments.get(number, len(line))].strip() for number, line in enumerate(lines, start=1)]


class _FoldSigns(ast.NodeTransformer):
    """`-0` is `0`, `+1` is `1`, `~1` is `-2`: one program, one mutant."""

    SIGNS = {ast.USub: neg, ast.UAdd: pos, ast.Invert: invert}

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        sign = self.SIGNS.get(type(node.op))
        if sign is None or not isinstance(node.operand, ast.Constant):
            return node
        try:
            return ast.copy_location(ast.Constant(sign(node.operand.value)), node)
        except TypeError:  # `-"a"`: left as written
            return node


def _program(source: str) -> str | None:
    """The program `source` is (its tree without layout, signs folded); None if it is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return ast.dump(_FoldSigns().visit(tree))


def mutant_module(mutant: Mutant, reference: types.ModuleType) -> types.ModuleType:
    """The mutant's code run as a module beside the reference (its imports are the reference's).

    It is not put in `sys.modules`: the exercises that import this one keep the reference.
    """
    from cosmic_ray.exceptions import CosmicRayTestingException

    module = types.ModuleType(f"{reference.__name__}__mutant")
    module.__file__ = reference.__file__
    # ExceptionReplacer names this class in an `except`
    module.__dict__["CosmicRayTestingException"] = CosmicRayTestingException
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `0 is x`: a mutant's, said once per mutant otherwise
        code = compile(mutant.source, reference.__file__, "exec")
    exec(code, module.__dict__)  # noqa: S102 - the reference's own code, mutated
    return module
