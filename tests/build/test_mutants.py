"""Mutants of a reference: the tensor operators, where mutants are made, one mutant per program."""

from __future__ import annotations

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


@pytest.mark.parametrize(("source", "expected"), [
    ("def f(t):\n    return t[:-1]\n",
     {(2, "return t[:-1]", "return t[1:]", "ShiftByOne"), (2, "return t[:-1]", "return t[:]", "ShiftByOne")}),
    ("def f(z):\n    return z.softmax(dim=-1)\n",
     {(2, "return z.softmax(dim=-1)", "return z.softmax(dim=0)", "ChangeDim"),
      (2, "return z.softmax(dim=-1)", "return z.softmax(dim=1)", "ChangeDim")}),
    ("def f(x, B, T, V):\n    return x.view(B * T, V)\n",
     {(2, "return x.view(B * T, V)", "return x.view(V, B * T)", "SwapArguments")}),
    ("def f(x):\n    B, T = x.shape\n    return B\n",
     {(2, "B, T = x.shape", "T, B = x.shape", "SwapShape")}),
    ("def f(model):\n    model.eval()  # (B, T)\n    return model\n",
     {(2, "model.eval()", "pass", "DropCall")}),
    ("def f(x, f):\n    with torch.no_grad():\n        return f(x)\n",
     {(2, "with torch.no_grad():", "if True:", "DropContext")}),
    ("def f(t):\n    return t.clone()\n", {(2, "return t.clone()", "return t", "DropMethod")}),
    ("def f(y, t):\n    return y[t]\n",
     {(2, "return y[t]", "return y[t + 1]", "OffByOne"), (2, "return y[t]", "return y[t - 1]", "OffByOne")}),
    ("def f(d, g):\n    return get_batch(d, 8, 4, generator=g)\n",
     {(2, "return get_batch(d, 8, 4, generator=g)", "return get_batch(d, 8, 4)", "DropKeyword")}),
], ids=["shift", "dim", "view", "shape", "drop-call", "no-grad", "clone", "index", "generator"])
def test_the_mutants_of_a_small_source(source, expected):
    """Each line as a student would see it, before and after, comments left out (cosmic-ray's
    operators add their own mutants of the same lines)."""
    operator = next(iter(expected))[3]
    assert {m for m in _shown(source) if m[3] == operator} == expected


def test_keepdim_is_one_mutant_named_by_the_tensor_operator():
    """cosmic-ray's True -> False writes the same program: one mutant, the more telling name."""
    found = _shown("def f(e):\n    return e.sum(dim=-1, keepdim=True)\n")
    flipped = [m for m in found if "keepdim=False" in m[2]]
    assert [m[3] for m in flipped] == ["FlipKeepdim"]


def test_a_number_negated_to_zero_is_the_same_mutant_as_zero():
    """`dim=-0` (NumberReplacer) is `dim=0` (ChangeDim): counted once."""
    afters = [m[2] for m in _shown("def f(e):\n    return e.sum(dim=-1)\n")]
    assert "return e.sum(dim=0)" in afters and "return e.sum(dim=- 0)" not in afters
    assert "return e.sum(dim=- 2)" in afters and "return e.sum(dim=~1)" not in afters  # -2, once


def test_generic_operators_come_from_cosmic_ray_without_crossing_families_or_powers():
    afters = {m[2]: m[3] for m in _shown("def f(a, b):\n    return a + b\n")}
    assert afters["return a - b"] == "ReplaceBinaryOperator_Add_Sub"
    assert afters["return a // b"] == "ReplaceBinaryOperator_Add_FloorDiv"
    assert not any(op in after for after in afters for op in ("**", "<<", ">>", "|", "&", "^"))


SOURCE = '''"""A module."""


def f(t, k=1):
    """Doc: t[:-1] and 2 + 3 are not code."""
    n = t[:-1]
    return n


class Model:
    def forward(self, x):
        return x + 1


ANSWER = 2 + 3
'''


def test_only_the_bodies_a_student_writes_are_mutated():
    """Not the docstrings, not the signature's defaults, not the module's hand answers."""
    assert student_lines(SOURCE) == [range(6, 8), range(12, 13)]
    lines = {m.line for m in mutants_of(SOURCE)}
    assert lines == {6, 12}


def test_a_mutant_runs_as_a_module_of_its_own():
    source = "def f(t):\n    return t[:-1]\n"
    import types

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
