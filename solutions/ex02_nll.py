"""练习 ex02：手写 next-token NLL（见 5.3、5.5、5.7 练习 2）。

logits 不是概率（5.3）：要先减去最大值再做 softmax，才能安全地取指数（5.5）；
交叉熵 = -log p(正确标签)，一个 batch 只对有效位置（label 不是 -100）取平均。
本文件不许调用任何替你做 softmax / log-sum-exp / 交叉熵的 API
（F.cross_entropy、F.log_softmax、torch.softmax、torch.logsumexp 等），
只用 max、exp、sum、log 这些基本运算。

Exercise ex02: next-token NLL by hand (see 5.3, 5.5 and 5.7 exercise 2). Subtract the
max before exponentiating; cross-entropy is -log p(label), averaged over the valid
positions only. No API that does the softmax, log-sum-exp or loss for you is allowed.
"""

import torch


def stable_softmax(logits):
    """数值稳定的 softmax：在最后一维上先减去最大值，再 exp、归一化。

    English: softmax over the last dim, subtracting the max first (finite for float32
    logits up to ±1e4).

    例（见 5.5）：logits [2.0, 1.0, 0.0, -1.0] → shifted [0, -1, -2, -3]
    → exp ≈ [1.000, 0.368, 0.135, 0.050]，sum ≈ 1.553：
        >>> stable_softmax(torch.tensor([2.0, 1.0, 0.0, -1.0])).round(decimals=3)
        tensor([0.6440, 0.2370, 0.0870, 0.0320])
    """
    ### BEGIN SOLUTION
    m = logits.max(dim=-1, keepdim=True).values  # (..., 1)
    e = torch.exp(logits - m)  # (..., V)
    return e / e.sum(dim=-1, keepdim=True)  # (..., V)
    ### END SOLUTION


def nll(logits, label):
    """单个位置的负对数似然 -log p(label)，用 log-sum-exp 形式计算，返回 float。

    English: -log p(label) for one position via the log-sum-exp form; returns a float.

    logits 是 1-D 的 [V]（列表或张量），label 是 int。
    -log p(label) = log Σ_j exp(z_j - m) + m - z_label，其中 m = max(z)。

    例（见 5.5，正确标签是 C，即下标 2）：
        >>> round(nll([2.0, 1.0, 0.0, -1.0], 2), 2)
        2.44
    """
    ### BEGIN SOLUTION
    z = torch.as_tensor(logits, dtype=torch.float32)  # (V,)
    m = z.max()  # ()
    log_sum_exp = torch.log(torch.exp(z - m).sum()) + m  # ()
    return float(log_sum_exp - z[label])
    ### END SOLUTION


def masked_mean_nll(logits, labels, ignore_index=-100):
    """一个 batch 的平均 NLL：只对 label != ignore_index 的位置取平均，返回 0 维张量。

    English: mean NLL over the positions whose label is not ignore_index (0-dim tensor);
    equal in value and gradient to F.cross_entropy(logits, labels, ignore_index=...);
    NaN when no label is valid.

    logits 是 [N, V]，labels 是 [N]。被忽略的位置既不进分子，也不进分母（5.5 末段）。

    例：第二个位置被忽略，只剩 5.5 那道题本身：
        >>> z = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
        >>> round(masked_mean_nll(z, torch.tensor([2, -100])).item(), 2)
        2.44
    """
    ### BEGIN SOLUTION
    valid = labels != ignore_index  # (N,)
    safe_labels = torch.where(valid, labels, torch.zeros_like(labels))  # (N,)
    m = logits.max(dim=-1, keepdim=True).values  # (N, 1)
    log_sum_exp = torch.log(torch.exp(logits - m).sum(dim=-1)) + m.squeeze(-1)  # (N,)
    picked = logits.gather(-1, safe_labels.unsqueeze(-1)).squeeze(-1)  # (N,)
    per_position = log_sum_exp - picked  # (N,)
    per_position = torch.where(valid, per_position, torch.zeros_like(per_position))  # (N,)
    return per_position.sum() / valid.sum()  # ()
    ### END SOLUTION


# 5.7 练习 2：正确标签改为 A（下标 0）后的 NLL，手算到至少两位小数。
# 5.7 exercise 2: the same example's NLL with label A (index 0), by hand.
### BEGIN SOLUTION 填一个 float，照 5.5 的步骤手算 / a float, by hand as in 5.5
# -log(1.000 / 1.553) = log(1.553) ≈ 0.44：A 本来就是概率最高的那个，所以 loss 小。
HAND_NLL_LABEL_A = 0.4402
### END SOLUTION
