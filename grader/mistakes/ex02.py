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


def _nll_probability(logits, label):
    """写出了概率 p(label)，没有取负对数 / the probability p(label), not its negative log."""
    import torch

    z = torch.as_tensor(logits, dtype=torch.float32)
    return float(torch.exp(z[label] - _lse(z)))


def _masked_mean_nll_probability(logits, labels, ignore_index=-100):
    import torch

    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    per = torch.exp(logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1) - _lse(logits))
    per = torch.where(valid, per, torch.zeros_like(per))
    return per.sum() / valid.sum()


MISTAKES = [
    Mistake(
        id='no_max_subtraction',
        section="5.5",
        zh="没有先减去最大值：logits 很大（如 1e4）时 exp 溢出成 inf，结果变成 nan 或 inf",
        en="The max is not subtracted first: with large logits (1e4) exp "
        "overflows to inf and the result is nan or inf",
        fix={"zh": "先 m = z.max(dim=-1, keepdim=True)，再对 z - m 做 exp；log Σ exp(z)"
                " = m + log Σ exp(z - m)",
             "en": "First m = z.max(dim=-1, keepdim=True), then exp of z - m; log "
                "Σ exp(z) = m + log Σ exp(z - m)"},
        overrides={"stable_softmax": _stable_softmax_no_max, "nll": _nll_no_max,
                   "masked_mean_nll": _masked_mean_nll_no_max},
        hint=2,
    ),
    Mistake(
        id='softmax_twice',
        section="5.3",
        zh="softmax 做了两遍：先把 logits 变成概率，又把概率当成 logits 算交叉熵",
        en="Softmax twice: the logits were turned into probabilities, then "
        "the probabilities were treated as logits by the cross-entropy",
        fix={"zh": "nll 直接对 logits 算：log-sum-exp(z) - z[label]，不要先 softmax",
             "en": "Compute nll on the logits directly: log-sum-exp(z) - z[label], "
                "no softmax first"},
        overrides={"nll": _nll_softmax_twice, "masked_mean_nll": _masked_mean_nll_softmax_twice},
        hint=1,
    ),
    Mistake(
        id='mean_includes_ignored',
        section="5.5",
        zh="平均的分母不对：被忽略的位置（label == ignore_index）也被算进了分母",
        en="The mean has the wrong denominator: ignored positions (label "
        "== ignore_index) are counted in it",
        fix={"zh": "分母是有效位置的个数 (labels != ignore_index).sum()，不是 labels.numel()",
             "en": "The denominator is the number of valid positions, (labels != "
                "ignore_index).sum(), not labels.numel()"},
        overrides={"masked_mean_nll": _masked_mean_nll_all_positions},
        hint=3,
    ),
    Mistake(
        id='sum_not_mean',
        section="5.5",
        zh="求了和而不是平均：一个 batch 的交叉熵应当是有效位置上的平均",
        en="Summed instead of averaged: a batch's cross-entropy is the mean "
        "over the valid positions",
        fix={"zh": "把有效位置的 NLL 之和除以有效位置的个数",
             "en": "Divide the sum of the valid positions' NLL by the number of "
                "valid positions"},
        overrides={"masked_mean_nll": _masked_mean_nll_sum},
        hint=3,
    ),
    Mistake(
        id='log2_not_ln',
        section="5.5",
        zh="对数的底不对：交叉熵用自然对数，这里用的是以 2 为底",
        en="The wrong logarithm: the cross-entropy uses the natural log, "
        "this is base 2",
        fix={"zh": "用 torch.log / math.log（自然对数），不要用 log2，也不要除以 ln 2",
             "en": "Use torch.log / math.log (natural log), not log2, and do not "
                "divide by ln 2"},
        overrides={"nll": _nll_log2, "masked_mean_nll": _masked_mean_nll_log2,
                   "HAND_NLL_LABEL_A": 0.6351},
        hint=2,
    ),
    Mistake(
        id='probability_not_nll',
        section="5.3、5.5",
        zh="写出的是正确标签的概率，不是它的负对数：NLL 是 -log p(label)，概率越大 NLL 越小",
        en="This is the right label's probability, not its negative log: the NLL is -log "
        "p(label), which shrinks as the probability grows",
        fix={"zh": "NLL = -log p(label) = log-sum-exp(z) - z[label]：算出概率之后还要取负对数",
             "en": "NLL = -log p(label) = log-sum-exp(z) - z[label]: after the probability, take "
                "its negative log"},
        overrides={"nll": _nll_probability, "masked_mean_nll": _masked_mean_nll_probability,
                   "HAND_NLL_LABEL_A": 0.6439},
        hint=1,
    ),
]
