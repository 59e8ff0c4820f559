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
        id='argmax_not_sampling',
        section=_GEN,
        zh="生成时取了最大值，没有按概率抽签：同一个上下文总是接同一个 token",
        en="generate takes the maximum instead of sampling: one context "
        "is always followed by the same token",
        fix={"zh": "softmax 之后调用一次 torch.multinomial(probs, num_samples=1, generator=generator)"
                "，不要 argmax",
             "en": "After the softmax, call torch.multinomial(probs, num_samples=1, "
                "generator=generator) once; no argmax"},
        overrides={"generate": _generate_argmax},
        hint=2,
    ),
    Mistake(
        id='all_positions_not_last',
        section=_GEN,
        zh="用了全部位置而不是最后一个：每一步只有最后一个位置的预测是新的",
        en="All positions instead of the last: at each step only the last "
        "position's prediction is new",
        fix={"zh": "generate 里取 model(context)[:, -1, :]；prefix_logits 对每个 t 调用 "
                "model(idx[:, :t+1]) 并取 [:, -1, :]",
             "en": "In generate take model(context)[:, -1, :]; prefix_logits calls "
                "model(idx[:, :t+1]) for each t and keeps [:, -1, :]"},
        overrides={"generate": _generate_all_positions, "prefix_logits": _prefix_logits_one_call},
        hint=1,
    ),
    Mistake(
        id='context_not_cropped',
        section="5.7 练习 4",
        zh="上下文没有裁到 block_size：序列变长后整段都喂给了模型",
        en="The context is not cropped to block_size: the whole growing "
        "sequence is fed to the model",
        fix={"zh": "每一步先 context = idx[:, -block_size:]（block_size 不是 None 时），再 "
                "model(context)",
             "en": "Each step, context = idx[:, -block_size:] (when block_size is "
                "not None), then model(context)"},
        overrides={"generate": _generate_no_crop},
        hint=2,
    ),
    Mistake(
        id='temperature_multiplied',
        section=_GEN,
        zh="temperature 用反了：logits 乘了 temperature（温度越高分布反而越尖）",
        en="The temperature works backwards: the logits are multiplied by "
        "it (a higher temperature sharpens)",
        fix={"zh": "logits / temperature，再 softmax",
             "en": "logits / temperature, then the softmax"},
        overrides={"generate": _generate_temperature_multiplied},
        hint=3,
    ),
    Mistake(
        id='mask_without_diagonal',
        section="5.7 练习 4",
        zh="mask 漏了对角线：位置 i 看不见它自己，第一个位置什么都看不见",
        en="The mask leaves out the diagonal: position i cannot see itself, "
        "the first position sees nothing",
        fix={"zh": "torch.tril(torch.ones(T, T, dtype=torch.bool))（diagonal=0，含 "
                "j == i）",
             "en": "torch.tril(torch.ones(T, T, dtype=torch.bool)) (diagonal=0, "
                "j == i included)"},
        overrides={"causal_mask": _causal_mask_no_diagonal},
        hint=3,
    ),
    Mistake(
        id='mask_transposed',
        section="5.7 练习 4",
        zh="mask 转置了（上三角）：每个位置看见的是未来，不是过去",
        en="The mask is transposed (upper triangle): each position sees "
        "the future, not the past",
        fix={"zh": "下三角 torch.tril(...)：(i, j) 为 True 当且仅当 j <= i",
             "en": "The lower triangle, torch.tril(...): (i, j) is True iff j <= "
                "i"},
        overrides={"causal_mask": _causal_mask_transposed},
        hint=3,
    ),
]
