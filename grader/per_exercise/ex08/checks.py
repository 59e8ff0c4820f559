"""Checks for ex08: get_batch and the T examples of a row (bigram lesson, "(B, T)")."""

import math

import pytest
import torch

from grader.judge import call, check_value, probe, same
from grader.judge.derived import derived
from grader.judge.labels import argument
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex08")

LESSON_X = [18, 47, 56, 57, 58, 1, 15, 47]
LESSON_Y = [47, 56, 57, 58, 1, 15, 47, 58]


def _random_data(n, seed, vocab=65):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(vocab, (n,), generator=g)  # (N,)


@pytest.mark.public
@pytest.mark.points(1)
def test_lesson_table(student, reference):
    """课文的表：[18] → 47，[18, 47] → 56，… | The lesson's table of examples"""
    expected = [(LESSON_X[: t + 1], LESSON_Y[t]) for t in range(8)]
    check_value(student, call("context_target_pairs", LESSON_X, LESSON_Y), expected, reference=reference)


@pytest.mark.points(1)
def test_pairs_from_tensors(student, reference):
    """一行张量拆成 T 条样本 | context_target_pairs on tensor rows"""
    same(student, reference, probe("ex08.pairs_from_batch", _random_data(50, 1), 6, 3, 0),
         label="context_target_pairs(x[b], y[b]) for a (3, 6) batch")
    same(student, reference, call("context_target_pairs", torch.tensor([5]), torch.tensor([9])))


@pytest.mark.public
@pytest.mark.points(1)
def test_small_example(student, reference):
    """data = arange(10)，block_size=3，batch_size=2 | A small batch on arange(10)"""
    same(student, reference, probe("ex08.batch", torch.arange(10), 3, 2, 1337),
         label="get_batch(torch.arange(10), 3, 2, generator=manual_seed(1337))")


@pytest.mark.points(2)
def test_same_batch_as_reference(student, reference):
    """同一个 generator 状态 → 同一批 | The same generator state gives the reference's batch"""
    for n, T, B, seed in [(100, 8, 4, 0), (1000, 8, 32, 1337), (37, 5, 7, 3), (9, 8, 5, 11)]:
        data = _random_data(n, seed)
        same(student, reference, probe("ex08.batch", data, T, B, seed),
             label=f"get_batch({argument(data)}, block_size={T}, batch_size={B}, generator=manual_seed({seed}))")


@pytest.mark.points(1)
def test_global_generator(student, reference):
    """不给 generator 时用全局随机数 | Without a generator, the global one"""
    data = _random_data(200, 5)
    same(student, reference, probe("ex08.batch_global", data, 8, 4, 42),
         label=f"torch.manual_seed(42); get_batch({argument(data)}, 8, 4)")


@pytest.mark.points(1)
def test_one_randint_call(student, reference):
    """只调用一次 torch.randint（之后的随机数和参考一致）| Exactly one randint call"""
    same(student, reference, probe("ex08.draws_once", _random_data(300, 2), 8, 16, 9),
         label="get_batch(…), then the generator's next draws")


@pytest.mark.points(1)
def test_layout(student, reference):
    """形状 (B, T)、long、内存连续 | Shape (B, T), long, contiguous"""
    for n, T, B in [(50, 8, 4), (20, 1, 3), (30, 6, 1)]:
        same(student, reference, probe("ex08.layout", n, T, B, 0), label=f"x, y for block_size={T}, batch_size={B}")


def start_facts(n, block_size, batch_size):
    """From the batches a worker reported (plain data), the facts every correct sampler shares.

    - each row of x is a slice of consecutive ids and y = x + 1 (the shift), or y = x (no shift:
      a y that is neither, drawn from other starts, is not that mistake);
    - the smallest and largest start drawn (0 and n - block_size - 1 expected);
    - whether every possible start's count is within 5 sigma of uniform, and no start outside
      [0, n - block_size - 1] was drawn.
    Computed here, in the judge: nothing the worker says is a fact until the judge reads it.
    """

    def facts(batches):
        offsets = torch.arange(block_size)  # (T,)
        rows_ok = shift_ok = y_is_x = isinstance(batches, list) and bool(batches)
        starts = []
        # the shapes say HOW a batch is wrong (B and T swapped, x one id too long, …), so two
        # different bugs never look alike here (a diagnosis compares every fact)
        shapes = [(batch_size, block_size), (batch_size, block_size)]
        for pair in batches if isinstance(batches, list) else []:
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)
                    and all(tuple(t.shape) == (batch_size, block_size) for t in pair)):
                rows_ok = shift_ok = y_is_x = False
                shapes = ([tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__ for t in pair]
                          if isinstance(pair, tuple) else type(pair).__name__)
                break
            x, y = pair  # (B, T) each
            ix = x[:, 0].long()  # (B,)
            rows_ok = rows_ok and bool((x == ix[:, None] + offsets[None, :]).all())
            shift_ok = shift_ok and bool((y == x + 1).all())
            y_is_x = y_is_x and bool((y == x).all())
            starts.append(ix)
        if not starts or not rows_ok:
            return {"rows_are_slices": rows_ok, "y_is_x_plus_1": shift_ok, "y_equals_x": y_is_x, "shapes": shapes,
                    "min_start": None, "max_start": None, "uniform_within_5_sigma": False}
        ix = torch.cat(starts)  # (n_batches * B,)
        n_starts = n - block_size  # possible starts: 0 .. n - block_size - 1
        inside = (ix >= 0) & (ix < n_starts)
        counts = torch.bincount(ix[inside], minlength=n_starts).double()  # (n_starts,)
        p = 1.0 / n_starts
        total = ix.numel()
        sigma = math.sqrt(total * p * (1 - p))
        uniform = bool(inside.all()) and bool(((counts - total * p).abs() <= 5 * sigma).all())
        return {"rows_are_slices": rows_ok, "y_is_x_plus_1": shift_ok, "y_equals_x": y_is_x, "shapes": shapes,
                "min_start": int(ix.min()), "max_start": int(ix.max()), "uniform_within_5_sigma": uniform}

    return facts


START_WORDS = {  # what each fact of `start_facts` says when it differs
    "rows_are_slices": ("x 的每一行应当是 data 里连续的一段", "each row of x should be consecutive ids of data"),
    "y_is_x_plus_1": ("y 应当是 x 右移一位", "y should be x shifted by one"),
    "y_equals_x": ("y 不应当和 x 一样", "y should not be x itself"),
    "shapes": ("x 和 y 都应当是 (batch_size, block_size)", "x and y should both be (batch_size, block_size)"),
    "min_start": ("最小的起点应当是 0", "the smallest start should be 0"),
    "max_start": ("最大的起点应当是 len(data) - block_size - 1", "the largest start should be len(data) - block_size - 1"),
    "uniform_within_5_sigma": ("每个合法起点被抽中的次数应当差不多，且不越界",
                               "every legal start should be drawn about equally often, and none outside"),
}


@pytest.mark.points(2)
def test_start_indices_uniform(student, reference):
    """起点均匀（±5σ），最大起点 len(data)-block_size-1 抽得到且不越界 | Uniform starts, bound reached, never exceeded"""
    for (n, T, B, batches, seed), label in [((24, 8, 64, 250, 0), "16,000 starts on arange(24), block_size=8"),
                                            ((12, 3, 50, 100, 1), "5,000 starts on arange(12), block_size=3")]:
        facts = start_facts(n, T, B)
        same(derived(student, facts), derived(reference, facts), probe("ex08.start_batches", n, T, B, batches, seed),
             label=label, words=START_WORDS)


@pytest.mark.points(1)
def test_shortest_data(student, reference):
    """len(data) == block_size + 1：只有一个起点 | Only one possible start"""
    # seed 9: randint(2, (3,)) draws [0, 0, 0], so the known "bound + 1" mistake looks right
    # here and is not named for other errors (it is caught by the checks above)
    same(student, reference, probe("ex08.batch", torch.arange(100, 109), 8, 3, 9),
         label="get_batch(arange(100, 109), 8, 3)")


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

_SECTION = "bigram 一课「一个片段含 T 条样本」「(B, T) 两个维度」"


def _get_batch_bound_plus_one(data, block_size, batch_size, generator=None):
    """起点上界多了 1：最后一个起点的 y 越界 / the bound is one too large."""
    import torch

    ix = torch.randint(len(data) - block_size + 1, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y


def _get_batch_bound_minus_one(data, block_size, batch_size, generator=None):
    """起点上界少了 1（以为 randint 的上界含在内）：最后一个合法起点抽不到 / the bound taken as inclusive."""
    import torch

    ix = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y


def _get_batch_y_not_shifted(data, block_size, batch_size, generator=None):
    """y 没有右移，等于 x / y is x itself."""
    import torch

    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i : i + block_size] for i in ix])
    return x, y


def _get_batch_swapped(data, block_size, batch_size, generator=None):
    """B 和 T 两个维度对调，返回 (T, B) / batch and time dimensions swapped."""
    import torch

    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + block_size] for i in ix], dim=1)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix], dim=1)
    return x, y


MISTAKES = [
    Mistake(
        id='randint_bound_plus_one',
        section=_SECTION,
        zh="起点的上界多了 1：可能抽到最后一个非法的起点，那时 y 的最后一个越界",
        en="The start bound is one too large: the one illegal last start "
        "can be drawn, and y's last item is then out of range",
        fix={"zh": "ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)"
                "（上界不含，不要 + 1）",
             "en": "ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)"
                " (exclusive bound, no + 1)"},
        overrides={"get_batch": _get_batch_bound_plus_one},
        hint=2,
    ),
    Mistake(
        id='randint_bound_minus_one',
        section=_SECTION,
        zh="起点的上界少了 1：torch.randint 的上界本来就不含在内，再减 1，最后一个合法的起点就永远抽不到了",
        en="The start bound is one too small: torch.randint's bound is already exclusive, so with "
        "one more subtracted the last legal start is never drawn",
        fix={"zh": "ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)"
                "（上界不含，不要再 - 1）",
             "en": "ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)"
                " (the bound is exclusive already: no - 1)"},
        overrides={"get_batch": _get_batch_bound_minus_one},
        hint=2,
    ),
    Mistake(
        id='y_not_shifted',
        section=_SECTION,
        zh="y 没有右移：y 和 x 一样",
        en="y is not shifted: y equals x",
        fix={"zh": "y[b] = data[ix[b]+1 : ix[b]+block_size+1]",
             "en": "y[b] = data[ix[b]+1 : ix[b]+block_size+1]"},
        overrides={"get_batch": _get_batch_y_not_shifted},
        hint=2,
    ),
    Mistake(
        id='batch_time_swapped',
        section=_SECTION,
        zh="B 和 T 两个维度对调了：每一列才是一个片段",
        en="Batch and time are swapped: each column, not each row, is one "
        "chunk",
        fix={"zh": "torch.stack([...]) 沿第 0 维叠（dim=0），x、y 的形状是 (batch_size, block_size)",
             "en": "torch.stack([...]) along dim 0; x and y are (batch_size, block_size)"},
        overrides={"get_batch": _get_batch_swapped},
        hint=3,
    ),
]
