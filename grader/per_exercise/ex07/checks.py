"""Checks for ex07: split by position (bigram lesson, "the data changed")."""

import random

import pytest
import torch

from grader.judge import call, check_value, probe, same
from grader.judge.mistakes import Mistake

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


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

_SECTION = "bigram 一课「数据换了，切法也得换」"


def _split_shuffled(data, train_frac=0.9):
    """先打乱再切（固定种子，结果可复现）/ shuffle (fixed seed) before splitting."""
    import random

    import torch

    if not (0 < train_frac < 1):
        raise ValueError(f"train_frac must be in (0, 1), got {train_frac!r}")
    n = int(train_frac * len(data))
    if isinstance(data, torch.Tensor):
        perm = torch.randperm(len(data), generator=torch.Generator().manual_seed(0))
        shuffled = data[perm]
    else:
        items = list(data)
        random.Random(0).shuffle(items)
        shuffled = "".join(items) if isinstance(data, str) else items
    return shuffled[:n], shuffled[n:]


def _split_round_up(data, train_frac=0.9):
    """n 向上取整 / n rounded up."""
    import math

    if not (0 < train_frac < 1):
        raise ValueError(f"train_frac must be in (0, 1), got {train_frac!r}")
    n = math.ceil(train_frac * len(data))
    return data[:n], data[n:]


MISTAKES = [
    Mistake(
        id='shuffled_before_split',
        section=_SECTION,
        zh="切之前打乱了：文本是连续的，打乱会让验证集的句子跟训练集的上下文相连（信息泄漏）",
        en="Shuffled before splitting: the text is continuous, so shuffling "
        "joins validation sentences to training context (a leak)",
        fix={"zh": "只按位置切：train = data[:n]，val = data[n:]",
             "en": "Split by position only: train = data[:n], val = data[n:]"},
        overrides={"split_train_val": _split_shuffled},
        hint=2,
    ),
    Mistake(
        id='n_rounded_up',
        section=_SECTION,
        zh="n 向上取整了：train 多了一个元素",
        en="n is rounded up: train has one element too many",
        fix={"zh": "n = int(train_frac * len(data))（int 向下截断，不要 round 或 math.ceil）",
             "en": "n = int(train_frac * len(data)) (int truncates; no round, no "
                "math.ceil)"},
        overrides={"split_train_val": _split_round_up},
        hint=3,
    ),
]
