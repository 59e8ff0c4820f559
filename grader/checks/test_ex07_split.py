"""Checks for ex07: split by position (bigram lesson, "the data changed")."""

import random

import pytest
import torch

from grader.judge import call, check_value, probe, same

pytestmark = pytest.mark.exercise("ex07")


@pytest.mark.public
@pytest.mark.points(1)
def test_stub_example(student, reference):
    """文档里的小例子 | The docstring's small example"""
    check_value(student, call("split_train_val", list(range(10)), 0.75),
                ([0, 1, 2, 3, 4, 5, 6], [7, 8, 9]), reference=reference)


@pytest.mark.public
@pytest.mark.points(2)
def test_course_split(student, reference, corpus_path):
    """tiny Shakespeare：1,003,854 / 111,540 | The lesson's split"""
    check_value(student, probe("ex07.corpus_split_lengths", corpus_path), (1_003_854, 111_540),
                label="len(train), len(val) on tiny Shakespeare", reference=reference)
    same(student, reference, probe("ex07.corpus_split_text", corpus_path), label="split_train_val(tiny Shakespeare)")


@pytest.mark.points(1)
def test_corpus_tensor(student, reference, corpus_path):
    """编码后的一维张量也按位置切 | The encoded corpus as a 1-D tensor"""
    same(student, reference, probe("ex07.corpus_split_tensor", corpus_path), label="split_train_val(encoded corpus)")
    same(student, reference, probe("ex07.corpus_split_tensor", corpus_path, 0.5),
         label="split_train_val(encoded corpus, 0.5)")


@pytest.mark.points(1)
def test_default_frac(student, reference):
    """默认 train_frac = 0.9 | The default train_frac is 0.9"""
    same(student, reference, call("split_train_val", list(range(100))))
    same(student, reference, call("split_train_val", "abcdefghijklmnopqrstuvwxyz"))


@pytest.mark.points(2)
def test_random_lists_and_strings(student, reference):
    """随机长度与比例（含 int 截断的边界）| Random lengths and fractions (truncation edges)"""
    rng = random.Random(7)
    cases = [(10, 0.7), (10, 0.3), (3, 0.1), (1, 0.5), (0, 0.9), (7, 0.99)]
    cases += [(rng.randint(0, 200), rng.choice([0.1, 0.25, 0.5, 0.6, 0.8, 0.9, rng.random() * 0.98 + 0.01]))
              for _ in range(12)]
    for n, frac in cases:
        data = [rng.randint(0, 64) for _ in range(n)]
        same(student, reference, call("split_train_val", data, frac))
        text = "".join(rng.choice("abc \n") for _ in range(n))
        same(student, reference, call("split_train_val", text, train_frac=frac))


@pytest.mark.points(1)
def test_tensor_input(student, reference):
    """一维 long 张量进，张量出 | A 1-D long tensor in, tensors out"""
    g = torch.Generator().manual_seed(7)
    for n, frac in [(20, 0.9), (101, 0.75), (5, 0.5)]:
        data = torch.randint(65, (n,), generator=g)
        same(student, reference, call("split_train_val", data, frac))


@pytest.mark.points(1)
def test_bad_frac(student, reference):
    """train_frac 不在 (0, 1)：ValueError | train_frac outside (0, 1) raises ValueError"""
    for frac in (0, 0.0, 1, 1.0, -0.1, 1.5, 2):
        same(student, reference, call("split_train_val", list(range(10)), frac))
