"""ex07 按位置切分的已知错误 / known mistakes of the train/val split."""

from grader.judge.mistakes import Mistake

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
