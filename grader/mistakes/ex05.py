"""ex05 TinyGPT 标签错位、展平与 loss 的已知错误 / known mistakes of the label shift, flattening and loss."""

from grader.judge.mistakes import Mistake


def _lm_loss_view_v_bt(logits, labels):
    """view(V, B*T) 再转置回来：形状对，行全错位 / view(V, B*T) then transposed: right shape, wrong rows."""
    import torch.nn.functional as F

    B, T, V = logits.shape
    flat_logits = logits.reshape(V, B * T).t()
    return F.cross_entropy(flat_logits, labels.reshape(B * T), ignore_index=-100)


def _make_lm_batch_not_shifted(token_ids, pad_id=None):
    """labels 没有右移，和 input_ids 一样 / labels equal the inputs."""
    input_ids = token_ids[:, :-1]
    labels = token_ids[:, :-1].clone()
    if pad_id is not None:
        labels[labels == pad_id] = -100
    return input_ids, labels


def _lm_loss_shifted_again(logits, labels):
    """make_lm_batch 已经错位，lm_loss 里又错了一次 / the loss shifts the already-shifted labels again."""
    import torch.nn.functional as F

    V = logits.shape[-1]
    shift_logits = logits[:, :-1, :].reshape(-1, V)
    shift_labels = labels[:, 1:].reshape(-1)
    return F.cross_entropy(shift_logits, shift_labels, ignore_index=-100)


def _make_lm_batch_pad_not_masked(token_ids, pad_id=None):
    """pad 没换成 -100 / pad labels not replaced by -100."""
    return token_ids[:, :-1], token_ids[:, 1:].clone()


def _lm_loss_softmax_first(logits, labels):
    """先 softmax 再交叉熵 / softmax before the cross-entropy."""
    import torch.nn.functional as F

    B, T, V = logits.shape
    probs = F.softmax(logits, dim=-1)
    return F.cross_entropy(probs.reshape(B * T, V), labels.reshape(B * T), ignore_index=-100)


MISTAKES = [
    Mistake(
        id="view_v_bt",
        section="5.6",
        zh="展平顺序错了：view(V, B*T) 形状对但行错位，要用 view(B*T, V)"
        "（见 5.6 与 bigram 一课「view 拉平为什么不会错位」）",
        en="Wrong flattening order: view(V, B*T) has the right shape but scrambled rows; use "
        "view(B*T, V) (5.6 and the bigram lesson, \"why view does not scramble the rows\")",
        overrides={"lm_loss": _lm_loss_view_v_bt},
        hint=3,
    ),
    Mistake(
        id="labels_not_shifted",
        section="5.2、5.6",
        zh="labels 没有右移：labels = token_ids[:, 1:]，input_ids = token_ids[:, :-1]"
        "（见 5.2：input [12, 9, 31, 7] → target [9, 31, 7, 5]）",
        en="The labels are not shifted: labels = token_ids[:, 1:], input_ids = token_ids[:, :-1] "
        "(5.2: input [12, 9, 31, 7] → target [9, 31, 7, 5])",
        overrides={"make_lm_batch": _make_lm_batch_not_shifted},
        hint=1,
    ),
    Mistake(
        id="shifted_twice",
        section="5.2、5.6",
        zh="错位了两次：make_lm_batch 已经把 labels 右移一位，lm_loss 里不要再 logits[:, :-1] / labels[:, 1:] 一次"
        "（见 5.2；lm_loss 直接把 (B, T, V) 展平成 (B*T, V)）",
        en="Shifted twice: make_lm_batch already shifts the labels; lm_loss must not do "
        "logits[:, :-1] / labels[:, 1:] again (5.2; lm_loss flattens (B, T, V) to (B*T, V) directly)",
        overrides={"lm_loss": _lm_loss_shifted_again},
        hint=1,
    ),
    Mistake(
        id="pad_not_masked",
        section="5.5",
        zh="pad 没有被 mask：labels 中等于 pad_id 的位置要换成 -100，才不进入平均"
        "（见 5.5 末段：labels 为 -100 的位置不进入平均）",
        en="Padding is not masked: labels equal to pad_id must become -100 so they stay out of the mean "
        "(5.5, last paragraph)",
        overrides={"make_lm_batch": _make_lm_batch_pad_not_masked},
        hint=2,
    ),
    Mistake(
        id="softmax_before_loss",
        section="5.3",
        zh="在交叉熵之前做了 softmax：F.cross_entropy 内部已经完成 log-softmax，直接传 logits"
        "（见 5.3：不要先手动 softmax 再交叉熵）",
        en="Softmax before the loss: F.cross_entropy already does the log-softmax, pass the logits "
        "(5.3: do not softmax before the cross-entropy)",
        overrides={"lm_loss": _lm_loss_softmax_first},
        hint=2,
    ),
]
