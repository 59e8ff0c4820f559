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
        id='view_v_bt',
        section="5.6",
        zh="展平顺序错了：logits 的形状凑对了，但每一行不再是一个位置 (b, t) 的 V 个分数",
        en="Wrong flattening order: the flat logits have the right shape, "
        "but a row is no longer the V scores of one position (b, t)",
        fix={"zh": "logits.view(B*T, V)（不是 view(V, B*T) 再转置），labels.view(B*T)",
             "en": "logits.view(B*T, V) (not view(V, B*T) and a transpose), labels.view(B*T)"},
        overrides={"lm_loss": _lm_loss_view_v_bt},
        hint=3,
    ),
    Mistake(
        id='labels_not_shifted',
        section="5.2、5.6",
        zh="labels 没有右移：每个位置的标签就是它自己的输入 token",
        en="The labels are not shifted: each position's label is its own "
        "input token",
        fix={"zh": "input_ids = token_ids[:, :-1]，labels = token_ids[:, 1:]",
             "en": "input_ids = token_ids[:, :-1], labels = token_ids[:, 1:]"},
        overrides={"make_lm_batch": _make_lm_batch_not_shifted},
        hint=1,
    ),
    Mistake(
        id='shifted_twice',
        section="5.2、5.6",
        zh="错位了两次：make_lm_batch 已经把 labels 右移过，lm_loss 里又错了一次",
        en="Shifted twice: make_lm_batch already shifted the labels, and "
        "lm_loss shifts them again",
        fix={"zh": "lm_loss 里不要再 logits[:, :-1] / labels[:, 1:]，直接展平 (B, T, V) → "
                "(B*T, V)",
             "en": "No logits[:, :-1] / labels[:, 1:] in lm_loss: flatten (B, T, "
                "V) to (B*T, V) directly"},
        overrides={"lm_loss": _lm_loss_shifted_again},
        hint=1,
    ),
    Mistake(
        id='pad_not_masked',
        section="5.5",
        zh="pad 没有被 mask：等于 pad_id 的标签也进了平均",
        en="Padding is not masked: labels equal to pad_id enter the mean",
        fix={"zh": "labels[labels == pad_id] = -100（pad_id 不是 None 时），cross_entropy "
                "的 ignore_index=-100 会跳过它们",
             "en": "labels[labels == pad_id] = -100 (when pad_id is not None); cross_entropy's "
                "ignore_index=-100 skips them"},
        overrides={"make_lm_batch": _make_lm_batch_pad_not_masked},
        hint=2,
    ),
    Mistake(
        id='softmax_before_loss',
        section="5.3",
        zh="交叉熵之前做了 softmax：交给 cross_entropy 的是概率而不是 logits",
        en="Softmax before the loss: cross_entropy is given probabilities, "
        "not logits",
        fix={"zh": "F.cross_entropy(logits.view(B*T, V), labels.view(B*T), ignore_index=-100)"
                "，不要先 softmax",
             "en": "F.cross_entropy(logits.view(B*T, V), labels.view(B*T), ignore_index=-100)"
                ", no softmax first"},
        overrides={"lm_loss": _lm_loss_softmax_first},
        hint=2,
    ),
]
