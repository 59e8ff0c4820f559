"""ex08 get_batch 的已知错误 / known mistakes of get_batch."""

from grader.judge.mistakes import Mistake

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
