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
        id="randint_bound_plus_one",
        section=_SECTION,
        zh="起点的上界多了 1：torch.randint(len(data) - block_size + 1, …) 会抽到 len(data) - block_size，"
        "这时 y 的最后一个越界。上界是 len(data) - block_size（不含），最大起点是 len(data) - block_size - 1"
        "（见 bigram 一课「一个片段含 T 条样本」：长度 T+1 的片段才有 T 条样本）",
        en="The start bound is one too large: randint(len(data) - block_size + 1, …) can draw "
        "len(data) - block_size, and y's last item is then out of range. The bound is "
        "len(data) - block_size (exclusive) (bigram lesson, \"one chunk holds T examples\": "
        "a chunk of T+1 gives T examples)",
        overrides={"get_batch": _get_batch_bound_plus_one},
        hint=2,
    ),
    Mistake(
        id="y_not_shifted",
        section=_SECTION,
        zh="y 没有右移：y 应该是 data[i+1 : i+block_size+1]，即 x 右移一位"
        "（见 bigram 一课「一个片段含 T 条样本」：y = train_data[1:9]，答案 = x 右移一位）",
        en="y is not shifted: y must be data[i+1 : i+block_size+1], x shifted by one "
        "(bigram lesson, \"one chunk holds T examples\": y = train_data[1:9])",
        overrides={"get_batch": _get_batch_y_not_shifted},
        hint=2,
    ),
    Mistake(
        id="batch_time_swapped",
        section=_SECTION,
        zh="B 和 T 两个维度对调了：x、y 的形状应该是 (batch_size, block_size)，每一行是一个片段"
        "（见 bigram 一课「(B, T) 两个维度」：32 页卷子、每页 8 道填空）",
        en="Batch and time are swapped: x and y must be (batch_size, block_size), one chunk per "
        "row (bigram lesson, \"the two dimensions (B, T)\")",
        overrides={"get_batch": _get_batch_swapped},
        hint=3,
    ),
]
