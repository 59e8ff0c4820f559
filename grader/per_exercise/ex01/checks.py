"""ex01 训练窗口的检查 / checks for the training windows (5.2, 5.7 exercise 1)."""

import random

import pytest
import torch

from grader.judge import call, check_value, same
from grader.judge.mistakes import Mistake

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
    # block_size 1, one token short of a window, and the bad arguments make_windows refuses too
    cases = [(4, 3, 1), (3, 3, 1), (0, 2, 1), (100, 8, 1), (100, 8, 8), (101, 8, 4), (1_115_394, 8, 8), (9, 8, 2),
             (5, 1, 1), (2, 3, 1), (5, 0, 1), (5, 2, 0)]
    for n, block_size, stride in cases:
        same(student, reference, call("count_targets", n, block_size, stride=stride))


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

_SECTION = "5.2、5.7 练习 1"


def _make_windows_drop_last(tokens, block_size, stride=1):
    """条件写成 <：最后一个完整窗口被丢掉 / `<` instead of `<=`: the last window is lost."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    out = []
    i = 0
    while i + block_size + 1 < len(tokens):
        out.append((tokens[i:i + block_size], tokens[i + 1:i + block_size + 1]))
        i += stride
    return out


def _count_targets_drop_last(n_tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    if n_tokens < block_size + 2:
        return 0
    return ((n_tokens - block_size - 2) // stride + 1) * block_size


def _make_windows_one_too_many(tokens, block_size, stride=1):
    """条件少了 +1：多出一个 y 不完整（越界）的窗口 / one window too many, its y runs out."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    out = []
    i = 0
    while i + block_size <= len(tokens):
        out.append((tokens[i:i + block_size], tokens[i + 1:i + block_size + 1]))
        i += stride
    return out


def _count_targets_one_too_many(n_tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    if n_tokens < block_size:
        return 0
    return ((n_tokens - block_size) // stride + 1) * block_size


def _shift_pairs_not_shifted(tokens):
    if len(tokens) < 2:
        raise ValueError("needs at least 2 tokens")
    return tokens[:-1], tokens[:-1]


def _make_windows_not_shifted(tokens, block_size, stride=1):
    """y 与 x 相同 / y == x."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    out = []
    i = 0
    while i + block_size + 1 <= len(tokens):
        out.append((tokens[i:i + block_size], tokens[i:i + block_size]))
        i += stride
    return out


def _shift_pairs_wrong_way(tokens):
    if len(tokens) < 2:
        raise ValueError("needs at least 2 tokens")
    return tokens[1:], tokens[:-1]


def _make_windows_wrong_way(tokens, block_size, stride=1):
    """x 和 y 对调：拿后一个 token 去预测前一个 / shifted the wrong way (x and y swapped)."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    out = []
    i = 0
    while i + block_size + 1 <= len(tokens):
        out.append((tokens[i + 1:i + block_size + 1], tokens[i:i + block_size]))
        i += stride
    return out


def _make_windows_stride_ignored(tokens, block_size, stride=1):
    """stride 被忽略，总是每次前进 1 / stride ignored, always step 1."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    out = []
    i = 0
    while i + block_size + 1 <= len(tokens):
        out.append((tokens[i:i + block_size], tokens[i + 1:i + block_size + 1]))
        i += 1
    return out


def _count_targets_stride_ignored(n_tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    if n_tokens < block_size + 1:
        return 0
    return (n_tokens - block_size) * block_size


def _count_targets_windows_only(n_tokens, block_size, stride=1):
    """数了窗口个数，忘了乘 block_size / counted windows, not targets."""
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    if n_tokens < block_size + 1:
        return 0
    return (n_tokens - block_size - 1) // stride + 1


MISTAKES = [
    Mistake(
        id='off_by_one_drop_last',
        section=_SECTION,
        zh="差一错误：最后一个完整的窗口被丢掉了（窗口数少了一个）。想一想最后一个合法的起点 i 能不能取到",
        en="Off by one: the last full window is dropped (one window too "
        "few). Can your loop reach the last legal start i?",
        fix={"zh": "循环条件是 i + block_size + 1 <= len(tokens)（含等号）：[12, 9, 31, 7, "
                "5] 切长度 3 的窗口，起点是 0 和 1",
             "en": "The loop condition is i + block_size + 1 <= len(tokens) (with "
                "the equals sign): windows of 3 over [12, 9, 31, 7, 5] start "
                "at 0 and 1"},
        overrides={"make_windows": _make_windows_drop_last, "count_targets": _count_targets_drop_last},
        hint=2,
    ),
    Mistake(
        id='off_by_one_extra_window',
        section=_SECTION,
        zh="差一错误：多出一个窗口，它的 y 越过了文本末尾（比 x 短）。一个窗口一共要用掉几个 token？",
        en="Off by one: one window too many, whose y runs past the end of "
        "the text (shorter than x). How many tokens does one window use "
        "in all?",
        fix={"zh": "一个窗口要 block_size + 1 个 token：条件写成 i + block_size + 1 <= len(tokens)"
                "，而不是 i + block_size <= len(tokens)",
             "en": "A window needs block_size + 1 tokens: the condition is i + block_size "
                "+ 1 <= len(tokens), not i + block_size <= len(tokens)"},
        overrides={"make_windows": _make_windows_one_too_many, "count_targets": _count_targets_one_too_many},
        hint=2,
    ),
    Mistake(
        id='target_not_shifted',
        section="5.2",
        zh="目标没有右移：y 和 x 一模一样，模型只要抄输入就能「答对」",
        en="The target is not shifted: y equals x, so copying the input "
        "would \"answer\"",
        fix={"zh": "target 是 input 右移一位：x = tokens[i:i+block_size]，y = tokens[i+1:i+block_size+1]；"
                "shift_pairs 返回 (tokens[:-1], tokens[1:])",
             "en": "The target is the input shifted by one: x = tokens[i:i+block_size], "
                "y = tokens[i+1:i+block_size+1]; shift_pairs returns (tokens[:-1], "
                "tokens[1:])"},
        overrides={"shift_pairs": _shift_pairs_not_shifted, "make_windows": _make_windows_not_shifted},
        hint=1,
    ),
    Mistake(
        id='shifted_wrong_way',
        section="5.2",
        zh="方向反了：x 和 y 对调，成了用后一个 token 预测前一个",
        en="Shifted the wrong way: x and y are swapped, predicting each "
        "token from the next one",
        fix={"zh": "inputs 是 tokens[:-1]，targets 是 tokens[1:]（不是反过来）；窗口里 x 从 i 开始、"
                "y 从 i+1 开始",
             "en": "inputs are tokens[:-1], targets tokens[1:] (not the other way "
                "round); in a window x starts at i and y at i+1"},
        overrides={"shift_pairs": _shift_pairs_wrong_way, "make_windows": _make_windows_wrong_way},
        hint=1,
    ),
    Mistake(
        id='stride_ignored',
        section=_SECTION,
        zh="stride 被忽略了：不管 stride 是几，窗口起点总是每次只前进 1",
        en="stride is ignored: whatever stride is, the windows start at "
        "every position",
        fix={"zh": "起点是 0, stride, 2*stride, …：循环里 i += stride（count_targets 也按 "
                "stride 数窗口）",
             "en": "Starts are 0, stride, 2*stride, …: i += stride in the loop (and "
                "count_targets counts windows by stride too)"},
        overrides={"make_windows": _make_windows_stride_ignored, "count_targets": _count_targets_stride_ignored},
        hint=3,
    ),
    Mistake(
        id='counted_windows_not_targets',
        section="5.2",
        zh="count_targets 数的是窗口个数，不是目标个数",
        en="count_targets counts windows, not targets",
        fix={"zh": "每个窗口有 block_size 个目标：返回 窗口数 × block_size",
             "en": "Each window holds block_size targets: return the number of windows "
                "× block_size"},
        overrides={"count_targets": _count_targets_windows_only},
        hint=3,
    ),
]
