"""Mutants of a reference: the tensor operators, where mutants are made, one mutant per program."""

from __future__ import annotations

import types

import pytest
from cosmic_ray.mutating import mutate_code

from grader.build.mutants import mutant_module, mutants_of, student_lines
from grader.build.mutant_check import spread
from grader.build.tensor_mutations import OPERATORS

EXAMPLES = [(op, ex) for op in OPERATORS for ex in op.examples()]


@pytest.mark.parametrize(("operator", "example"), EXAMPLES,
                         ids=[f"{op.__name__}-{i}" for i, (op, _) in enumerate(EXAMPLES)])
def test_each_tensor_operator_writes_its_examples(operator, example):
    assert mutate_code(example.pre_mutation_code, operator(), example.occurrence) == example.post_mutation_code


def _shown(source: str) -> set[tuple[int, str, str, str]]:
    return {(m.line, m.before, m.after, m.operator) for m in mutants_of(source)}


def solution(signature: str, *body: str) -> str:
    """A function whose body is a solution region: its lines are 3, 4, …"""
    lines = [signature, "    ### BEGIN SOLUTION", *(f"    {line}" for line in body), "    ### END SOLUTION"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("source", "expected"), [
    (solution("def f(t):", "return t[:-1]"),
     {(3, "return t[:-1]", "return t[1:]", "ShiftByOne"), (3, "return t[:-1]", "return t[:]", "ShiftByOne")}),
    (solution("def f(z):", "return z.softmax(dim=-1)"),
     {(3, "return z.softmax(dim=-1)", "return z.softmax(dim=0)", "ChangeDim"),
      (3, "return z.softmax(dim=-1)", "return z.softmax(dim=1)", "ChangeDim")}),
    (solution("def f(x, B, T, V):", "return x.view(B * T, V)"),
     {(3, "return x.view(B * T, V)", "return x.view(V, B * T)", "SwapArguments")}),
    (solution("def f(x):", "B, T = x.shape", "return B"),
     {(3, "B, T = x.shape", "T, B = x.shape", "SwapShape")}),
    (solution("def f(model):", "model.eval()  # (B, T)", "return model"),
     {(3, "model.eval()", "pass", "DropCall")}),
    (solution("def f(x, f):", "with torch.no_grad():", "    return f(x)"),
     {(3, "with torch.no_grad():", "if True:", "DropContext")}),
    (solution("def f(t):", "return t.clone()"), {(3, "return t.clone()", "return t", "DropMethod")}),
    (solution("def f(y, t):", "return y[t]"),
     {(3, "return y[t]", "return y[t + 1]", "OffByOne"), (3, "return y[t]", "return y[t - 1]", "OffByOne")}),
    (solution("def f(d, g):", "return get_batch(d, 8, 4, generator=g)"),
     {(3, "return get_batch(d, 8, 4, generator=g)", "return get_batch(d, 8, 4)", "DropKeyword")}),
], ids=["shift", "dim", "view", "shape", "drop-call", "no-grad", "clone", "index", "generator"])
def test_the_mutants_of_a_small_source(source, expected):
    """Each line as a student would see it, before and after, comments left out (cosmic-ray's
    operators add their own mutants of the same lines)."""
    operator = next(iter(expected))[3]
    assert {m for m in _shown(source) if m[3] == operator} == expected


def test_keepdim_is_one_mutant_named_by_the_tensor_operator():
    """cosmic-ray's True -> False writes the same program: one mutant, the more telling name."""
    found = _shown(solution("def f(e):", "return e.sum(dim=-1, keepdim=True)"))
    flipped = [m for m in found if "keepdim=False" in m[2]]
    assert [m[3] for m in flipped] == ["FlipKeepdim"]


def test_a_number_negated_to_zero_is_the_same_mutant_as_zero():
    """`dim=-0` (NumberReplacer) is `dim=0` (ChangeDim): counted once."""
    afters = [m[2] for m in _shown(solution("def f(e):", "return e.sum(dim=-1)"))]
    assert "return e.sum(dim=0)" in afters and "return e.sum(dim=- 0)" not in afters
    assert "return e.sum(dim=- 2)" in afters and "return e.sum(dim=~1)" not in afters  # -2, once


def test_generic_operators_come_from_cosmic_ray_without_crossing_families_or_powers():
    afters = {m[2]: m[3] for m in _shown(solution("def f(a, b):", "return a + b"))}
    assert afters["return a - b"] == "ReplaceBinaryOperator_Add_Sub"
    assert afters["return a // b"] == "ReplaceBinaryOperator_Add_FloorDiv"
    assert not any(op in after for after in afters for op in ("**", "<<", ">>", "|", "&", "^"))


SOURCE = '''"""A module."""


def f(t, k=1):
    """Doc: t[:-1] and 2 + 3 are not code."""
    ### BEGIN SOLUTION
    n = t[:-1]
    return n
    ### END SOLUTION


class Model:
    def forward(self, x):
        ### BEGIN SOLUTION
        return x + 1
        ### END SOLUTION

    def helper(self, x):
        return x - 1


### BEGIN SOLUTION an int
ANSWER = 2 + 3
### END SOLUTION
'''


def test_only_the_solution_regions_are_mutated():
    """Not the docstrings, signatures or code around the regions, not the module's hand answers."""
    assert student_lines(SOURCE) == {7, 8, 15}
    assert {m.line for m in mutants_of(SOURCE)} == {7, 15}


def test_a_mutant_runs_as_a_module_of_its_own():
    source = solution("def f(t):", "return t[:-1]")

    reference = types.ModuleType("ex99_scratch")
    reference.__file__ = "ex99_scratch.py"
    exec(compile(source, reference.__file__, "exec"), reference.__dict__)
    first = mutants_of(source)[0]
    module = mutant_module(first, reference)
    assert module.f([1, 2, 3]) == [2, 3] and reference.f([1, 2, 3]) == [1, 2]


def test_a_sample_is_spread_over_the_file():
    assert spread(list(range(6)), 3) == [0, 2, 4]
    assert spread(list(range(2)), 3) == [0, 1]
    assert spread(list(range(4)), None) == [0, 1, 2, 3]
