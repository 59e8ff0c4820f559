"""ex04 并行训练与逐 token 生成的检查 / checks for parallel training vs sequential generation (5.7 exercise 4)."""

import pytest
import torch

from grader.judge import assert_ok, call, fail, observe, probe, read, same
from grader.per_exercise.ex04.fixtures import expected_frequencies
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex04")


@pytest.mark.public
@pytest.mark.points(1)
def test_causal_mask_small(student, reference):
    """causal_mask：T=3 的下三角（含对角线）| causal_mask: the lower triangle for T=3"""
    same(student, reference, call("causal_mask", 3))


@pytest.mark.points(1)
def test_causal_mask_sizes(student, reference):
    """causal_mask：T = 1 … 9，布尔型 | causal_mask: T = 1 … 9, bool"""
    for T in (1, 2, 5, 9):
        same(student, reference, call("causal_mask", T))


@pytest.mark.points(2)
def test_prefix_logits_calls(student, reference):
    """prefix_logits：T 次单独调用，每行取前缀的最后一个位置 | prefix_logits: T separate calls, last position of each prefix"""
    same(student, reference, probe("ex04.prefix", kind="mix", B=2, T=5, seed=1),
         label="prefix_logits(model, idx (2, 5))")
    same(student, reference, probe("ex04.prefix", kind="mix", vocab_size=7, B=3, T=1, seed=2),
         label="prefix_logits(model, idx (3, 1))")


@pytest.mark.points(1)
def test_prefix_logits_equals_causal_forward(student, reference):
    """prefix_logits：对因果模型（TinyGPT）等于一次前向 | prefix_logits: equals one forward of a causal model"""
    same(student, reference, probe("ex04.prefix_vs_forward", seed=3),
         label="prefix_logits(TinyGPT, idx (2, 6)) against one forward")


@pytest.mark.public
@pytest.mark.points(1)
def test_generate_shape_and_calls(student, reference):
    """generate：形状 [B, T + max_new_tokens]，模型调用 max_new_tokens 次 | generate: shape and number of model calls"""
    same(student, reference, probe("ex04.generate", kind="mix", B=2, T=3, max_new_tokens=6, seed=4, gseed=4),
         label="generate(model, idx (2, 3), max_new_tokens=6)")


@pytest.mark.points(2)
def test_generate_same_draws(student, reference):
    """generate：同一个 generator 种子给出同样的 token | generate: the same generator seed gives the same tokens"""
    same(student, reference, probe("ex04.generate", kind="mix", B=4, T=2, max_new_tokens=12, seed=5, gseed=55),
         label="generate(model, idx (4, 2), max_new_tokens=12)")
    same(student, reference, probe("ex04.generate", kind="tinygpt", vocab_size=32, B=2, T=1, max_new_tokens=5,
                                   block_size=8, seed=6, gseed=66),
         label="generate(model, idx (2, 1), max_new_tokens=5, block_size=8)")
    same(student, reference, probe("ex04.generate", kind="mix", B=2, T=2, max_new_tokens=5, seed=7, gseed=77,
                                   use_generator=False),
         label="generate(model, idx (2, 2), max_new_tokens=5, no generator)")


@pytest.mark.points(1)
def test_generate_crops_context(student, reference):
    """generate：上下文裁到最后 block_size 个 | generate: the context is cropped to the last block_size ids"""
    same(student, reference, probe("ex04.generate", kind="mix", B=2, T=3, max_new_tokens=8, block_size=4,
                                   seed=8, gseed=88),
         label="generate(model, idx (2, 3), max_new_tokens=8, block_size=4)")
    same(student, reference, probe("ex04.generate", kind="tinygpt", vocab_size=32, B=2, T=3, max_new_tokens=7,
                                   block_size=6, seed=9, gseed=99),
         label="generate(model, idx (2, 3), max_new_tokens=7, block_size=6)")


@pytest.mark.points(1)
def test_generate_temperature(student, reference):
    """generate：temperature 是除数（0.5 与 3.0）| generate: logits divided by temperature (0.5 and 3.0)"""
    for t in (0.5, 3.0):
        same(student, reference, probe("ex04.generate", kind="mix", B=4, T=2, max_new_tokens=10, temperature=t,
                                       seed=10, gseed=110),
             label=f"generate(model, idx (4, 2), max_new_tokens=10, temperature={t})")


@pytest.mark.points(1)
def test_generate_samples_follow_softmax(student, reference):
    """generate：抽样频率符合 softmax(logits / temperature)（±5σ）| generate: sample frequencies follow the softmax (±5σ)"""
    n = 4000
    for t in (1.0, 0.5):
        out = assert_ok(observe(student, probe("ex04.generate_samples", t, n=n, gseed=123)),
                        label=f"generate(model, idx (n, 2), 1, temperature={t})")
        want = expected_frequencies(t)
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n, 3) or out.is_floating_point() \
                or bool((out[:, -1] < 0).any()) or bool((out[:, -1] >= want.numel()).any()):
            fail("抽样结果的形状或取值不对", "the samples have the wrong shape or values", label="frequencies",
                 expected=str((n, 3)), got=str(tuple(out.shape)) if isinstance(out, torch.Tensor) else type(out).__name__)
        got = torch.bincount(out[:, -1].long(), minlength=want.numel()).float() / n  # (V,), counted in the judge
        sigma = (want * (1 - want) / n).sqrt()
        if bool(((got - want).abs() > 5 * sigma + 1e-3).any()):
            fail(f"temperature={t} 时抽到各 token 的频率不符合 softmax(logits / temperature)：是不是取了 argmax、"
                 "乘了 temperature，或者没有只用最后一个位置？",
                 f"with temperature={t} the token frequencies do not follow softmax(logits / temperature): argmax, "
                 "temperature multiplied, or not the last position only?",
                 label=f"frequencies (temperature={t})",
                 expected=" ".join(f"{p:.3f}" for p in want.tolist()),
                 got=" ".join(f"{p:.3f}" for p in got.tolist()))


@pytest.mark.points(1)
def test_generate_bad_temperature(student, reference):
    """generate：temperature <= 0 抛 ValueError | generate: ValueError when temperature <= 0"""
    for t in (0.0, -1.0):
        same(student, reference, probe("ex04.generate", kind="mix", max_new_tokens=2, temperature=t),
             label=f"generate(model, idx (2, 3), max_new_tokens=2, temperature={t})")
    same(student, reference, probe("ex04.generate", kind="mix", B=1, T=2, max_new_tokens=0, seed=12),
         label="generate(model, idx (1, 2), max_new_tokens=0)")


@pytest.mark.manual
@pytest.mark.points(0)
def test_why_parallel_answered(student, reference):
    """WHY_PARALLEL：书面回答（待人工批改）| WHY_PARALLEL: the written answer (awaiting manual grading)"""
    answer = assert_ok(observe(student, read("WHY_PARALLEL")), label="WHY_PARALLEL")
    if not isinstance(answer, str) or not answer.strip():
        fail("WHY_PARALLEL 应当是一段非空的文字回答", "WHY_PARALLEL must be a non-empty written answer",
             label="WHY_PARALLEL", expected="非空字符串 / a non-empty str", got=repr(answer)[:40])
    student.record("WHY_PARALLEL", "非空回答 / a non-empty answer", f"{len(answer.strip())} 字 / chars")


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

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
