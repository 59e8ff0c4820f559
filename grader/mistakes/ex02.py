"""ex02 手写 NLL 的已知错误 / known mistakes of the hand-written NLL."""

from grader.judge.mistakes import Mistake


def _stable_softmax_no_max(logits):
    import torch

    e = torch.exp(logits)
    return e / e.sum(dim=-1, keepdim=True)


def _nll_no_max(logits, label):
    import torch

    z = torch.as_tensor(logits, dtype=torch.float32)
    return float(torch.log(torch.exp(z).sum()) - z[label])


def _masked_mean_nll_no_max(logits, labels, ignore_index=-100):
    import torch

    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    lse = torch.log(torch.exp(logits).sum(dim=-1))
    per = lse - logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum() / valid.sum()


def _lse(z):
    import torch

    m = z.max(dim=-1, keepdim=True).values
    return torch.log(torch.exp(z - m).sum(dim=-1)) + m.squeeze(-1)


def _nll_softmax_twice(logits, label):
    """先 softmax 得到概率，再把概率当 logits 交叉熵一次 / softmax, then cross-entropy on the probabilities."""
    import torch

    z = torch.as_tensor(logits, dtype=torch.float32)
    p = torch.exp(z - z.max()) / torch.exp(z - z.max()).sum()
    return float(_lse(p) - p[label])


def _masked_mean_nll_softmax_twice(logits, labels, ignore_index=-100):
    import torch

    e = torch.exp(logits - logits.max(dim=-1, keepdim=True).values)
    p = e / e.sum(dim=-1, keepdim=True)
    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    per = _lse(p) - p.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum() / valid.sum()


def _masked_mean_nll_all_positions(logits, labels, ignore_index=-100):
    """被忽略的位置也进了分母 / ignored positions counted in the denominator."""
    import torch

    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    per = _lse(logits) - logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum() / labels.numel()


def _masked_mean_nll_sum(logits, labels, ignore_index=-100):
    import torch

    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    per = _lse(logits) - logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum()


def _nll_log2(logits, label):
    import math

    import torch

    z = torch.as_tensor(logits, dtype=torch.float32)
    return float(_lse(z) - z[label]) / math.log(2)


def _masked_mean_nll_log2(logits, labels, ignore_index=-100):
    import math

    import torch

    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    per = _lse(logits) - logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum() / valid.sum() / math.log(2)


MISTAKES = [
    Mistake(
        id="no_max_subtraction",
        section="5.5",
        zh="没有先减去最大值：logits 很大（如 1e4）时 exp 溢出成 inf，结果变成 nan/inf。"
        "先减去最大值再 exp，概率不变（见 5.5：shifted = [0, -1, -2, -3]）",
        en="The max is not subtracted first: with large logits (1e4) exp overflows to inf and the "
        "result is nan/inf. Subtracting the max leaves the probabilities unchanged (5.5)",
        overrides={"stable_softmax": _stable_softmax_no_max, "nll": _nll_no_max,
                   "masked_mean_nll": _masked_mean_nll_no_max},
        hint=2,
    ),
    Mistake(
        id="softmax_twice",
        section="5.3",
        zh="先做了 softmax，又把概率当成 logits 再算一次交叉熵（softmax 做了两遍）："
        "交叉熵内部已经完成 log-softmax，直接对 logits 算（见 5.3：不要先手动 softmax 再交叉熵）",
        en="Softmax was applied, then the probabilities were treated as logits by the cross-entropy "
        "(softmax twice): work on the logits directly (5.3: do not softmax before the cross-entropy)",
        overrides={"nll": _nll_softmax_twice, "masked_mean_nll": _masked_mean_nll_softmax_twice},
        hint=1,
    ),
    Mistake(
        id="mean_includes_ignored",
        section="5.5",
        zh="被忽略的位置（label == ignore_index）也算进了分母：平均只对有效位置取，分母是有效 token 数"
        "（见 5.5 末段：labels 为 -100 的位置不进入平均）",
        en="Ignored positions (label == ignore_index) are counted in the denominator: the mean is over "
        "the valid positions only (5.5, last paragraph: -100 positions do not enter the mean)",
        overrides={"masked_mean_nll": _masked_mean_nll_all_positions},
        hint=3,
    ),
    Mistake(
        id="sum_not_mean",
        section="5.5",
        zh="求了和而不是平均：一个 batch 的交叉熵对所有有效位置取平均（见 5.5 末段）",
        en="Summed instead of averaged: a batch's cross-entropy is the mean over the valid positions "
        "(5.5, last paragraph)",
        overrides={"masked_mean_nll": _masked_mean_nll_sum},
        hint=3,
    ),
    Mistake(
        id="log2_not_ln",
        section="5.5",
        zh="用了以 2 为底的对数：交叉熵用自然对数 ln（见 5.5：-log(0.087) ≈ 2.44 是自然对数；"
        "log2 会得到 3.52）",
        en="log base 2 was used: the cross-entropy uses the natural log (5.5: -ln(0.087) ≈ 2.44; "
        "log2 would give 3.52)",
        overrides={"nll": _nll_log2, "masked_mean_nll": _masked_mean_nll_log2,
                   "HAND_NLL_LABEL_A": 0.6351},
        hint=2,
    ),
]
