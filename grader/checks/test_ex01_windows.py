"""ex01 训练窗口的检查 / checks for the training windows (5.2, 5.7 exercise 1)."""

import random

import pytest
import torch

from grader.judge import call, check_value, same

pytestmark = pytest.mark.exercise("ex01")

COURSE = [12, 9, 31, 7, 5]


def _tokens(rng, n):
    return [rng.randrange(50) for _ in range(n)]


@pytest.mark.public
@pytest.mark.points(1)
def test_shift_pairs_course_example(student, reference):
    """shift_pairs：课本 5.2 的例子 | shift_pairs: the example of 5.2"""
    check_value(student, call("shift_pairs", COURSE), ([12, 9, 31, 7], [9, 31, 7, 5]), reference=reference)


@pytest.mark.public
@pytest.mark.points(2)
def test_make_windows_course_example(student, reference):
    """make_windows：5.7 练习 1 的两个窗口 | make_windows: the two windows of 5.7 exercise 1"""
    check_value(student, call("make_windows", COURSE, 3),
                [([12, 9, 31], [9, 31, 7]), ([9, 31, 7], [31, 7, 5])], reference=reference)


@pytest.mark.points(1)
def test_shift_pairs_random_and_tensor(student, reference, draws):
    """shift_pairs：随机列表与 1-D 张量（张量进、张量出）| shift_pairs: random lists and 1-D tensors"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    rng = random.Random(draws.seed(101))
    for n in (2, 3, 10):
        same(student, reference, call("shift_pairs", _tokens(rng, n)))
    g = torch.Generator().manual_seed(draws.seed(101))
    for n in (2, 9):
        same(student, reference, call("shift_pairs", torch.randint(65, (n,), generator=g)))


@pytest.mark.points(1)
def test_shift_pairs_too_short(student, reference):
    """shift_pairs：少于 2 个 token 抛 ValueError | shift_pairs: ValueError below 2 tokens"""
    same(student, reference, call("shift_pairs", []))
    same(student, reference, call("shift_pairs", [7]))
    same(student, reference, call("shift_pairs", torch.tensor([7])))


@pytest.mark.points(2)
def test_make_windows_random_strides(student, reference, draws):
    """make_windows：随机长度、block_size 与 stride | make_windows: random lengths, block sizes, strides"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    rng = random.Random(draws.seed(202))
    cases = [(9, 2, 3), (10, 3, 2), (12, 4, 4), (13, 4, 5), (7, 1, 1), (20, 5, 3)]
    for _ in range(6):
        cases.append((rng.randrange(2, 25), rng.randrange(1, 6), rng.randrange(1, 5)))
    for n, block_size, stride in cases:
        same(student, reference, call("make_windows", _tokens(rng, n), block_size, stride=stride))


@pytest.mark.points(1)
def test_make_windows_tensor(student, reference):
    """make_windows：1-D 张量进、张量出 | make_windows: a 1-D tensor gives tensors"""
    g = torch.Generator().manual_seed(303)
    data = torch.randint(65, (11,), generator=g)  # (n,)
    same(student, reference, call("make_windows", data, 4))
    same(student, reference, call("make_windows", data, 3, stride=2))


@pytest.mark.points(1)
def test_make_windows_edges(student, reference):
    """make_windows：正好一个窗口、不够一个窗口、非法参数 | make_windows: exactly one window, none, bad arguments"""
    same(student, reference, call("make_windows", [1, 2, 3, 4], 3))  # exactly block_size + 1 tokens
    same(student, reference, call("make_windows", [1, 2, 3], 3))  # too few: []
    same(student, reference, call("make_windows", [], 2))
    same(student, reference, call("make_windows", [1, 2, 3, 4, 5], 0))  # ValueError
    same(student, reference, call("make_windows", [1, 2, 3, 4, 5], 2, stride=0))  # ValueError


@pytest.mark.points(1)
def test_count_targets(student, reference):
    """count_targets：窗口数 × block_size | count_targets: windows times block_size"""
    check_value(student, call("count_targets", 5, 3), 6, reference=reference)
    cases = [(4, 3, 1), (3, 3, 1), (0, 2, 1), (100, 8, 1), (100, 8, 8), (101, 8, 4), (1_115_394, 8, 8), (9, 8, 2)]
    for n, block_size, stride in cases:
        same(student, reference, call("count_targets", n, block_size, stride=stride))
