"""练习 ex05：TinyGPT 的标签错位、logits 展平与 loss（见 5.6、5.7 练习 5 与验收标准）。

TinyGPT（grader/tinygpt.py）的 forward(idx) 只给出 logits (B, T, V)，loss 是这里的事：

    token_ids (B, T+1) → 错位：input_ids (B, T)、labels (B, T)      make_lm_batch
    input_ids (B, T) → 隐藏状态 (B, T, C) → logits (B, T, V)        TinyGPT
    logits (B, T, V) → (B*T, V)，labels (B, T) → (B*T,)              lm_loss
    → 对 labels != -100 的位置取平均的交叉熵：一个标量 ()

进入 lm_head 的隐藏状态用 model.hidden(input_ids) 取得，
model(input_ids) 等于 model.lm_head(model.hidden(input_ids))。

Exercise ex05: TinyGPT label shift, flattening and loss (see 5.6, 5.7 exercise 5 and the
acceptance criterion). TinyGPT returns logits (B, T, V) only; shifting the labels,
flattening to (B*T, V) / (B*T,) and the cross-entropy with ignore_index=-100 are done
here. model.hidden(input_ids) gives the hidden state (B, T, C) that enters lm_head.
"""

import torch
import torch.nn.functional as F

from grader.tinygpt import TinyGPT  # noqa: F401  (读一读它的 forward / read its forward)


def make_lm_batch(token_ids, pad_id=None):
    """把 token_ids [B, T+1] 错位成 (input_ids [B, T], labels [B, T])，pad 的标签换成 -100。

    English: input_ids = token_ids[:, :-1], labels = token_ids[:, 1:], with every label
    equal to pad_id replaced by -100 (the input is not modified).

    例（5.6 的数据，0 当作 pad）：
        >>> x, y = make_lm_batch(torch.tensor([[1, 4, 2, 8, 0], [3, 2, 9, 1, 0]]), pad_id=0)
        >>> x
        tensor([[1, 4, 2, 8],
                [3, 2, 9, 1]])
        >>> y
        tensor([[   4,    2,    8, -100],
                [   2,    9,    1, -100]])
    """
    ### BEGIN SOLUTION
    input_ids = token_ids[:, :-1]  # (B, T)
    labels = token_ids[:, 1:].clone()  # (B, T) clone：不改动调用者的张量
    if pad_id is not None:
        labels[labels == pad_id] = -100  # (B, T)
    return input_ids, labels
    ### END SOLUTION


def lm_loss(logits, labels):
    """语言模型 loss：展平成 [B*T, V] 与 [B*T]，交叉熵，ignore_index=-100，返回 0 维张量。

    English: flatten logits [B, T, V] to [B*T, V] and labels [B, T] to [B*T], then
    cross-entropy with ignore_index=-100 (a 0-dim tensor).

    第 i 行对应位置 (b, t)，i = b*T + t；labels 用同样的顺序展平，天然对齐。
    不要先 softmax：F.cross_entropy 内部已经做了 log-softmax（5.3）。

    例：全零 logits 等于均匀瞎猜，loss = ln V = ln 32 ≈ 3.4657：
        >>> labels = torch.tensor([[4, 2, 8, -100], [2, 9, 1, -100]])
        >>> round(lm_loss(torch.zeros(2, 4, 32), labels).item(), 4)
        3.4657
    """
    ### BEGIN SOLUTION
    B, T, V = logits.shape
    flat_logits = logits.view(B * T, V)  # (B*T, V)
    flat_labels = labels.view(B * T)  # (B*T,)
    return F.cross_entropy(flat_logits, flat_labels, ignore_index=-100)  # ()
    ### END SOLUTION


def trace_shapes(model, input_ids, labels):
    """走一遍 TinyGPT 的一步，记下每个阶段的形状（tuple）。

    English: the shapes, as tuples, at each stage of one TinyGPT step: keys "input_ids",
    "hidden" (what enters lm_head), "logits", "flat_logits", "flat_labels", "loss".

    隐藏状态用 model.hidden(input_ids)，logits 用 model(input_ids)
    （或 model.lm_head(hidden)，二者相同）。每个值是 tuple(张量.shape)，0 维的 loss 是 ()。

    例（5.6 的设定：B=2、T=4、C=8、V=32）：
        >>> model = TinyGPT(vocab_size=32, block_size=8, n_embd=8)
        >>> x = torch.tensor([[1, 4, 2, 8], [3, 2, 9, 1]])
        >>> y = torch.tensor([[4, 2, 8, -100], [2, 9, 1, -100]])
        >>> trace_shapes(model, x, y)["flat_logits"]
        (8, 32)
    """
    ### BEGIN SOLUTION
    hidden = model.hidden(input_ids)  # (B, T, C)
    logits = model.lm_head(hidden)  # (B, T, V)
    B, T, V = logits.shape
    flat_logits = logits.view(B * T, V)  # (B*T, V)
    flat_labels = labels.view(B * T)  # (B*T,)
    loss = lm_loss(logits, labels)  # ()
    return {
        "input_ids": tuple(input_ids.shape),
        "hidden": tuple(hidden.shape),
        "logits": tuple(logits.shape),
        "flat_logits": tuple(flat_logits.shape),
        "flat_labels": tuple(flat_labels.shape),
        "loss": tuple(loss.shape),
    }
    ### END SOLUTION


# 5.6 的设定（B=2、T=4、C=8、V=32）下手填的形状，外加 labels
# [[4, 2, 8, -100], [2, 9, 1, -100]] 中真正进入平均的目标个数 n_valid。
# Filled in by hand for section 5.6's setting, plus n_valid for those labels.
### BEGIN SOLUTION 填一个 dict，键同 trace_shapes 再加 "n_valid"，值是手写的 tuple（loss 是 ()）和 int / a dict with trace_shapes' keys plus "n_valid": shapes as tuples written by hand (loss is ()), n_valid an int
SHAPE_ANSWERS = {
    "input_ids": (2, 4),
    "hidden": (2, 4, 8),
    "logits": (2, 4, 32),
    "flat_logits": (8, 32),
    "flat_labels": (8,),
    "loss": (),
    "n_valid": 6,
}
### END SOLUTION
