"""ex04 并行训练与逐 token 生成的已知错误 / known mistakes of parallel training vs generation."""

from grader.judge.mistakes import Mistake

_GEN = "5.7 练习 4 与 bigram 一课「generate：自回归的全部」"


def _generate_argmax(model, idx, max_new_tokens, block_size=None, temperature=1.0, generator=None):
    """取最大值而不是抽签 / argmax instead of sampling."""
    import torch

    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    for _ in range(max_new_tokens):
        idx_cond = idx if block_size is None else idx[:, -block_size:]
        logits = model(idx_cond)[:, -1, :] / temperature
        idx_next = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _generate_all_positions(model, idx, max_new_tokens, block_size=None, temperature=1.0, generator=None):
    """没有取 [:, -1, :]，拿全部位置去 softmax 抽签 / all positions, not the last."""
    import torch
    import torch.nn.functional as F

    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    for _ in range(max_new_tokens):
        idx_cond = idx if block_size is None else idx[:, -block_size:]
        logits = model(idx_cond) / temperature
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _prefix_logits_one_call(model, idx):
    """只调用一次模型、直接返回全部位置 / one call, all positions returned as they are."""
    return model(idx)


def _generate_no_crop(model, idx, max_new_tokens, block_size=None, temperature=1.0, generator=None):
    """没有裁到最后 block_size 个 / the context is not cropped to block_size."""
    import torch
    import torch.nn.functional as F

    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    for _ in range(max_new_tokens):
        logits = model(idx)[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _generate_temperature_multiplied(model, idx, max_new_tokens, block_size=None, temperature=1.0,
                                     generator=None):
    """logits 乘以 temperature 而不是除以 / temperature multiplied instead of divided."""
    import torch
    import torch.nn.functional as F

    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    for _ in range(max_new_tokens):
        idx_cond = idx if block_size is None else idx[:, -block_size:]
        logits = model(idx_cond)[:, -1, :] * temperature
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _causal_mask_no_diagonal(T):
    import torch

    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def _causal_mask_transposed(T):
    import torch

    return torch.triu(torch.ones(T, T, dtype=torch.bool))


MISTAKES = [
    Mistake(
        id="argmax_not_sampling",
        section=_GEN,
        zh="用了 argmax 而不是按概率抽签：应当 softmax 后调用一次 torch.multinomial(probs, num_samples=1, "
        "generator=generator)（见 bigram 一课：multinomial 是按概率抽签不是取最大，argmax 会让输出陷入循环）",
        en="argmax instead of sampling: softmax, then one torch.multinomial(probs, num_samples=1, "
        "generator=generator) (bigram lesson: multinomial samples, argmax makes the output loop)",
        overrides={"generate": _generate_argmax},
        hint=2,
    ),
    Mistake(
        id="all_positions_not_last",
        section=_GEN,
        zh="用了全部位置而不是最后一个：生成时只要 logits[:, -1, :]；prefix_logits 要对每个前缀单独调用一次模型、"
        "取它的最后一个位置（见 bigram 一课「为什么只取最后一个位置」）",
        en="All positions instead of the last: generation uses logits[:, -1, :] only; prefix_logits calls "
        "the model once per prefix and keeps its last position (bigram lesson, \"why only the last position\")",
        overrides={"generate": _generate_all_positions, "prefix_logits": _prefix_logits_one_call},
        hint=1,
    ),
    Mistake(
        id="context_not_cropped",
        section="5.7 练习 4",
        zh="没有把上下文裁到最后 block_size 个 token：每一步先 idx[:, -block_size:] 再喂给模型"
        "（模型的位置表只有 block_size 行）",
        en="The context is not cropped to the last block_size tokens: feed idx[:, -block_size:] to the "
        "model each step (its position table has only block_size rows)",
        overrides={"generate": _generate_no_crop},
        hint=2,
    ),
    Mistake(
        id="temperature_multiplied",
        section=_GEN,
        zh="temperature 乘错了：logits 要除以 temperature 再 softmax（见 bigram 一课：logits 除以 T 再 softmax）",
        en="Temperature multiplied: divide the logits by temperature, then softmax "
        "(bigram lesson: divide the logits by T before the softmax)",
        overrides={"generate": _generate_temperature_multiplied},
        hint=3,
    ),
    Mistake(
        id="mask_without_diagonal",
        section="5.7 练习 4",
        zh="mask 漏了对角线：位置 i 要能看见自己（j <= i，含 j == i），否则第一个位置什么都看不见",
        en="The mask leaves out the diagonal: position i must see itself (j <= i, including j == i); "
        "otherwise the first position sees nothing",
        overrides={"causal_mask": _causal_mask_no_diagonal},
        hint=3,
    ),
    Mistake(
        id="mask_transposed",
        section="5.7 练习 4",
        zh="mask 转置了（上三角）：(i, j) 是「位置 i 能否看见位置 j」，只能看过去 j <= i，是下三角"
        "（见 bigram 一课：第 3 个位置不能偷看第 5 个位置的答案）",
        en="The mask is transposed (upper triangle): (i, j) says whether position i may see j; only the "
        "past, j <= i, the lower triangle (bigram lesson: position 3 must not peek at position 5)",
        overrides={"causal_mask": _causal_mask_transposed},
        hint=3,
    ),
]
