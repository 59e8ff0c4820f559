"""Checks for ex10: the initial loss (bigram lesson, "the initial loss is twice as bad")."""

import math
import random

import pytest

import torch

from grader.judge import Tol, call, check_value, probe, same
from grader.judge.compare import kind
from grader.judge.derived import derived
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex10")


@pytest.mark.public
@pytest.mark.points(1)
def test_uniform_loss_course(student, reference):
    """ln 65 = 4.174，ln 27 = 3.2958 | The lesson's rulers"""
    check_value(student, call("uniform_loss", 65), 4.174, tol=Tol(rtol=0, atol=5e-4), reference=reference)
    check_value(student, call("uniform_loss", 27), 3.2958, tol=Tol(rtol=0, atol=5e-5), reference=reference)


@pytest.mark.points(1)
def test_uniform_loss_other(student, reference):
    """其他词表大小 | Other vocabulary sizes"""
    for v in (1, 2, 10, 256, 50257, 151936):
        same(student, reference, call("uniform_loss", v))


@pytest.mark.public
@pytest.mark.points(1)
def test_mean_correct_prob_course(student, reference):
    """4.87 → 0.0077；ln 65 → 1/65 | The lesson's numbers"""
    check_value(student, call("mean_correct_prob", 4.87), 0.0077, tol=Tol(rtol=0, atol=5e-5), reference=reference)
    check_value(student, call("mean_correct_prob", math.log(65)), 1 / 65, reference=reference)


@pytest.mark.points(1)
def test_mean_correct_prob_other(student, reference):
    """随机 loss | Random losses"""
    rng = random.Random(10)
    for loss in [0.0, 0.5, 2.49, 1.48] + [rng.uniform(0, 12) for _ in range(6)]:
        same(student, reference, call("mean_correct_prob", loss))


@pytest.mark.public
@pytest.mark.points(1)
def test_suspicious_course(student, reference):
    """4.87 比 4.174 高太多：可疑；4.18 不可疑 | 4.87 is suspicious for 65, 4.18 is not"""
    check_value(student, call("init_is_suspicious", 4.87, 65), True, reference=reference)
    check_value(student, call("init_is_suspicious", 4.18, 65), False, reference=reference)


@pytest.mark.points(1)
def test_suspicious_cases(student, reference):
    """低于 ln V 不可疑；tol 生效 | Below ln V is fine; tol is used"""
    cases = [((3.0, 65), {}), ((1.0, 27), {}), ((4.30, 65), {}), ((4.30, 65), {"tol": 0.2}),
             ((3.40, 27), {}), ((3.35, 27), {}), ((17.0, 27), {}), ((3.3, 27), {"tol": 0.0}),
             ((3.29, 27), {"tol": 0.0}), ((5.0, 65), {"tol": 1.0}),
             ((math.log(65) + 0.25, 65), {"tol": 0.25})]  # exactly tol above ln V: not suspicious (`>`, not `>=`)
    for args, kwargs in cases:
        same(student, reference, call("init_is_suspicious", *args, **kwargs))


def init_facts(target: float, full: bool = True):
    """From one observed small_init_ call (plain data), the facts the check is about.

    sample mean ~ N(0, std²/n), sample std ~ N(std, std²/(2n)): within 5 sigma of those.
    `full=False`: only the statistics (for the checks about the std argument).
    """

    def facts(run):
        after, before = run.get("after"), run.get("before")
        if not isinstance(after, torch.Tensor) or not isinstance(before, torch.Tensor) or after.shape != before.shape:
            return {"malformed": kind(after)}
        w = after.double()  # (V, V)
        n = w.numel()
        mean, sd = float(w.mean()), float(w.std())
        band = 5 * target / math.sqrt(2 * n)
        sd_kind = "zero" if sd == 0 else "too small" if sd < target - band else "too large" if sd > target + band else "ok"
        if sd_kind in ("too small", "too large"):  # how far off: std² and std/10 are different bugs
            sd_kind += f" (×{sd / target:.2g})"
        stats = {"refilled": not torch.equal(after, before),
                 "mean_within_5_sigma": abs(mean) <= 5 * target / math.sqrt(n), "std": sd_kind}
        if not full:
            return stats
        return {"returns_none": run.get("returned") is None, "same_parameter": run.get("same_parameter") is True,
                "requires_grad": run.get("requires_grad"), "shape": tuple(after.shape), **stats}

    return facts


INIT_WORDS = {  # what each fact of `init_facts` says when it differs
    "malformed": ("embedding 的权重应当还是一个同形状的张量", "the embedding's weight should still be a tensor of its shape"),
    "returns_none": ("small_init_ 应当返回 None", "small_init_ should return None"),
    "same_parameter": ("Parameter 被换掉了：应当原地改原来那个", "the Parameter was replaced: refill the same one in place"),
    "requires_grad": ("权重应当仍然 requires_grad", "the weight should still require grad"),
    "shape": ("表的形状应当不变", "the table's shape should not change"),
    "refilled": ("表应当被重新填过", "the table should be refilled"),
    "mean_within_5_sigma": ("均值应当接近 0", "the mean should be close to 0"),
    "std": ("标准差应当是 std", "the standard deviation should be std"),
}


@pytest.mark.points(2)
def test_small_init_default(student, reference):
    """small_init_(emb)：原地、返回 None、N(0, 0.01²) | In place, returns None, N(0, 0.01²)"""
    facts = init_facts(0.01)
    same(derived(student, facts), derived(reference, facts), probe("ex10.init_run", 65),
         label="small_init_(nn.Embedding(65, 65))", words=INIT_WORDS)


@pytest.mark.points(1)
def test_small_init_std(student, reference):
    """std 参数生效 | The std argument is used"""
    for V, std, seed in [(200, 0.05, 1), (30, 1.0, 2)]:
        facts = init_facts(std, full=False)
        same(derived(student, facts), derived(reference, facts), probe("ex10.init_run", V, std=std, seed=seed),
             label=f"small_init_(nn.Embedding({V}, {V}), std={std})", words=INIT_WORDS)


@pytest.mark.points(2)
def test_fresh_loss_near_ln_v(student, reference, corpus_path):
    """small_init_ 之后新 bigram 的 loss 离 ln V 不到 0.05 | After small_init_, a fresh bigram's loss ≈ ln V"""
    check_value(derived(student, near_ln_v), probe("ex10.fresh_loss_near_ln_v", corpus_path),
                {"default_init_above_ln_v": True, "after_within_0.05_of_ln_v": True},
                label="small_init_(a bigram's table), then its loss on tiny Shakespeare",
                reference=derived(reference, near_ln_v),
                words={"default_init_above_ln_v": ("默认初始化的 loss 应当明显高于 ln V", "the default init's loss should be well above ln V"),
                       "after_within_0.05_of_ln_v": ("small_init_ 之后 loss 应当离 ln V 不到 0.05",
                                                    "after small_init_ the loss should be within 0.05 of ln V")})


def near_ln_v(losses) -> dict:
    """Whether the default init's loss was above ln V + 0.1 and the table small_init_ left gives
    a loss within 0.05 of ln V (from the losses the probe computed with the kit's own model).

    >>> near_ln_v({"before": 4.9, "after": 4.18, "ln_v": 4.174})
    {'default_init_above_ln_v': True, 'after_within_0.05_of_ln_v': True}
    """
    before, after, ln_v = (losses.get(k) for k in ("before", "after", "ln_v"))
    return {"default_init_above_ln_v": before > ln_v + 0.1, "after_within_0.05_of_ln_v": abs(after - ln_v) <= 0.05}


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

_SECTION = "bigram 一课「★ 初始 loss 比瞎猜还差一半」"


def _uniform_loss_log2(vocab_size):
    import math

    return math.log2(vocab_size)


def _mean_correct_prob_percent(loss):
    import math

    return 100 * math.exp(-loss)


def _init_is_suspicious_abs(initial_loss, vocab_size, tol=0.1):
    import math

    return abs(initial_loss - math.log(vocab_size)) > tol


def _small_init_variance(embedding, std=0.01):
    import torch

    with torch.no_grad():
        embedding.weight.normal_(mean=0.0, std=std**2)  # 把方差当标准差 / variance as std


def _small_init_zeros(embedding, std=0.01):
    import torch

    with torch.no_grad():
        embedding.weight.zero_()


def _small_init_new_parameter(embedding, std=0.01):
    import torch
    import torch.nn as nn

    embedding.weight = nn.Parameter(torch.randn_like(embedding.weight) * std)  # a new table / 换了一张新表


MISTAKES = [
    Mistake(
        id='log2_not_ln',
        section=_SECTION,
        zh="对数的底不对：交叉熵用自然对数，这里是以 2 为底",
        en="The wrong logarithm: cross-entropy uses the natural log, this "
        "is base 2",
        fix={"zh": "uniform_loss 返回 math.log(vocab_size)",
             "en": "uniform_loss returns math.log(vocab_size)"},
        overrides={"uniform_loss": _uniform_loss_log2},
        hint=2,
    ),
    Mistake(
        id='percent_not_fraction',
        section=_SECTION,
        zh="返回了百分数：要的是 0 到 1 之间的小数",
        en="A percentage: the answer is a fraction between 0 and 1",
        fix={"zh": "返回 math.exp(-loss)，不要乘 100",
             "en": "Return math.exp(-loss), without the factor 100"},
        overrides={"mean_correct_prob": _mean_correct_prob_percent},
        hint=2,
    ),
    Mistake(
        id='suspicious_both_ways',
        section=_SECTION,
        zh="比 ln V 低也被当成了可疑：只有比 ln V 高出 tol 以上才说明初始化有问题",
        en="Below ln V is taken as suspicious too: only more than tol ABOVE "
        "ln V signals a bad init",
        fix={"zh": "return initial_loss - math.log(vocab_size) > tol（不要 abs）",
             "en": "return initial_loss - math.log(vocab_size) > tol (no abs)"},
        overrides={"init_is_suspicious": _init_is_suspicious_abs},
        hint=3,
    ),
    Mistake(
        id='std_as_variance',
        section=_SECTION,
        zh="标准差用错了：权重的标准差成了 std²（把方差当成了标准差），应当是 std",
        en="The wrong spread: the weights' standard deviation came out as "
        "std² (the variance taken for the std); it should be std",
        fix={"zh": "在 torch.no_grad() 里 embedding.weight.normal_(0.0, std)",
             "en": "Inside torch.no_grad(): embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_variance},
        hint=3,
    ),
    Mistake(
        id='new_parameter',
        section=_SECTION,
        zh="换掉了 Parameter：embedding.weight 被赋成了一个新的 nn.Parameter，数值分布对，但之前建好的优化器"
        "（和其他引用这张表的地方）还拿着旧的那张表",
        en="The Parameter was replaced: embedding.weight was assigned a new nn.Parameter; its values are "
        "right, but an optimizer built before (and anything else holding the table) still has the old one",
        fix={"zh": "不要给 embedding.weight 赋新值：在 torch.no_grad() 里原地 embedding.weight.normal_(0.0, std)",
             "en": "Do not assign embedding.weight: refill it in place, inside torch.no_grad(): "
                   "embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_new_parameter},
        hint=3,
    ),
    Mistake(
        id='zeros_not_normal',
        section=_SECTION,
        zh="权重全设成了 0：loss 正好是 ln V，但表里没有任何随机性",
        en="All weights set to zero: the loss is exactly ln V, but the table "
        "has no randomness at all",
        fix={"zh": "从 N(0, std²) 重新抽样：embedding.weight.normal_(0.0, std)",
             "en": "Redraw from N(0, std²): embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_zeros},
        hint=3,
    ),
]
