"""ex02 手写 NLL 的检查 / checks for the hand-written NLL (5.3, 5.5, 5.7 exercise 2).

The contract forbids every API that does the softmax, log-sum-exp or loss for the student.
That rule is judged on the judge's reading of the source (grader.judge.uses): a function
that reaches a forbidden name — in its body, in anything of the submission's it calls, at the
top level of a file it reaches — fails the forbidden-API check and every check that calls it,
naming the API, the file and the line. Nothing that ran in the worker changes that verdict.
"""

import pytest
import torch

from grader.judge import Tol, assert_ok, check_hand, check_value, fail, observe, probe, read, same
from grader.judge.uses import reached
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex02")

# What does the softmax, log-sum-exp or loss for the student, by the name written: the
# contract's list (EXERCISES.md), their modules (nn.Softmax, …), and the kernels that do a
# softmax or a log-sum-exp inside something else (attention, masked and sparse softmaxes, a
# cumulative log-sum-exp whose last entry is the log-sum-exp, distributions normalising logits).
FORBIDDEN = frozenset({
    "cross_entropy", "cross_entropy_loss", "nll_loss", "nll_loss2d", "nll_loss_nd", "nll_loss_forward",
    "nll_loss2d_forward", "CrossEntropyLoss", "NLLLoss", "softmax", "log_softmax", "logsumexp", "softmin",
    "gumbel_softmax", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "_softmax", "_log_softmax", "_safe_softmax",
    "_masked_softmax", "_sparse_softmax", "_sparse_log_softmax", "logcumsumexp", "_logcumsumexp",
    "scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention",
    "_native_multi_head_attention", "_transformer_encoder_layer_fwd", "_flash_attention_forward",
    "_efficient_attention_forward", "Categorical", "OneHotCategorical", "Multinomial", "RelaxedOneHotCategorical",
    "ExpRelaxedCategorical",
})


def forbidden(name: str) -> bool:
    """Whether a name written in the source is one of the forbidden APIs.

    >>> forbidden("softmax"), forbidden("_scaled_dot_product_flash_attention"), forbidden("exp")
    (True, True, False)
    """
    return name in FORBIDDEN or name.startswith("_scaled_dot_product")


def _listed(uses, lang: str) -> str:
    shown = []
    for use in uses[:3]:
        through = (f"，经由 {' → '.join(use.via)}" if lang == "zh" else f", through {' → '.join(use.via)}") if use.via else ""
        shown.append(f"{use.written}（{use.where}{through}）" if lang == "zh" else f"{use.written} ({use.where}{through})")
    more = len(uses) - len(shown)
    if more > 0:
        shown.append(f"另有 {more} 处" if lang == "zh" else f"{more} more")
    return "、".join(shown) if lang == "zh" else ", ".join(shown)


def written_by_hand(source, *functions: str) -> None:
    """Fail the check when one of `functions` reaches a forbidden API in the submission's
    source (grader.judge.uses), naming each use, its file and line; else nothing.

    Every check that calls a function runs this first: an answer that uses a forbidden API
    scores the same whether or not anything in the worker would have noticed.
    """
    found = {fn: reached(source, fn, forbidden) for fn in functions}
    found = {fn: uses for fn, uses in found.items() if uses}
    if not found:
        return
    zh = "；".join(f"{fn} 用了 {_listed(uses, 'zh')}" for fn, uses in found.items())
    en = "; ".join(f"{fn} uses {_listed(uses, 'en')}" for fn, uses in found.items())
    fail(f"用了本练习禁止的 API：{zh}。softmax、log-sum-exp 和交叉熵要自己用 max、exp、sum、log 写（见 5.5）",
         f"forbidden APIs used: {en}. Write the softmax, log-sum-exp and loss yourself with max, exp, sum, log (5.5)",
         label=", ".join(found), expected="未使用 / none used",
         got=", ".join(dict.fromkeys(u.written for uses in found.values() for u in uses)), kind="rule")


def random_case(seed, n, v, scale=3.0, n_ignored=0, ignore_index=-100):
    """Deterministic (logits, labels) for the checks: [n, v] floats, [n] labels with n_ignored ignored."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, v, generator=g) * scale  # (N, V)
    y = torch.randint(v, (n,), generator=g)  # (N,)
    if n_ignored:
        pos = torch.randperm(n, generator=g)[:n_ignored]
        y[pos] = ignore_index
    return z, y

COURSE_LOGITS = [2.0, 1.0, 0.0, -1.0]
TWO_DECIMALS = Tol(rtol=0.0, atol=0.005)
GRAD_TOL = Tol(rtol=1e-4, atol=1e-6)


@pytest.mark.public
@pytest.mark.points(1)
def test_nll_course_example(student, reference, source):
    """nll：5.5 的例题，标签 C → 2.44 | nll: the example of 5.5, label C gives 2.44"""
    written_by_hand(source, "nll")
    check_value(student, probe("ex02.nll", COURSE_LOGITS, 2), 2.44, tol=TWO_DECIMALS, reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_hand_nll_label_a(student, reference):
    """HAND_NLL_LABEL_A：标签改为 A 后手算的 NLL | HAND_NLL_LABEL_A: the hand NLL with label A"""
    check_hand(student, reference, read("HAND_NLL_LABEL_A"), tol=TWO_DECIMALS)


@pytest.mark.points(2)
def test_forbidden_apis(student, reference, source):
    """不许调用现成的 softmax / log-sum-exp / 交叉熵 | no ready-made softmax, log-sum-exp or loss"""
    written_by_hand(source, "stable_softmax", "nll", "masked_mean_nll")
    # Only the use of a forbidden API fails here; whether the values are right is for the
    # other checks, so a wrong answer never reads as "you broke the no-API rule". The rule is
    # only seen kept by a function that returns: a file whose functions all raise has none.
    z, y = random_case(7, 6, 5, n_ignored=1)
    calls = {"stable_softmax": probe("ex02.softmax", z), "nll": probe("ex02.nll", z[0].tolist(), int(y[0])),
             "masked_mean_nll": probe("ex02.masked", z, y)}
    got = {name: observe(student, a_call) for name, a_call in calls.items()}
    if any(obs.ok for obs in got.values()):
        student.record("forbidden APIs", "未使用 / none used", "未使用 / none used")
        return
    if all(obs.error and obs.error.get("not_implemented") for obs in got.values()):
        assert_ok(got["stable_softmax"], label="stable_softmax, nll, masked_mean_nll")  # a stub: not implemented
    unfinished = {name: obs.error_type or "?" for name, obs in got.items()}
    zh = "、".join(f"{name}（{why}）" for name, why in unfinished.items())
    en = ", ".join(f"{name} ({why})" for name, why in unfinished.items())
    fail(f"没法确认没用禁止的 API：{zh} 都没有运行完。至少一个函数能运行后，这一项才算数",
         f"cannot tell that no forbidden API is used: {en} did not run to the end. This counts once a "
         "function runs", label="stable_softmax, nll, masked_mean_nll",
         expected="运行完、未使用 / runs, none used", got=en)


@pytest.mark.points(1)
def test_stable_softmax_random(student, reference, draws, source):
    """stable_softmax：随机 logits，1-D 到 3-D，沿最后一维 | stable_softmax: random logits, 1-D to 3-D, last dim"""
    written_by_hand(source, "stable_softmax")
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    g = torch.Generator().manual_seed(draws.seed(11))
    for shape in [(4,), (3, 7), (2, 3, 5), (1, 1)]:
        same(student, reference, probe("ex02.softmax", torch.randn(shape, generator=g) * 4))


@pytest.mark.points(1)
def test_stable_softmax_large(student, reference, source):
    """stable_softmax：±1e4 的 logits 也是有限值 | stable_softmax: finite for logits up to ±1e4"""
    written_by_hand(source, "stable_softmax")
    # each row shifted by its own max: one global max would turn the last row into 0/0
    same(student, reference, probe("ex02.softmax", torch.tensor(
        [[1e4, 0.0, -1e4], [1e4, 1e4 - 1.0, 3.0], [-1e4, -1e4 + 2.0, -1e4 + 1.0]])))
    same(student, reference, probe("ex02.softmax", torch.tensor([-1e4, -1e4 + 2.0, -1e4 + 1.0])))


@pytest.mark.points(1)
def test_nll_random_and_large(student, reference, draws, source):
    """nll：随机例子（列表与张量）和很大的 logits | nll: random cases (list and tensor) and large logits"""
    written_by_hand(source, "nll")
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    g = torch.Generator().manual_seed(draws.seed(12))
    for v in (3, 10, 65):
        z = (torch.randn(v, generator=g) * 3).tolist()
        label = int(torch.randint(v, (1,), generator=g))
        same(student, reference, probe("ex02.nll", z, label))
        same(student, reference, probe("ex02.nll", z, label, as_tensor=True))
    same(student, reference, probe("ex02.nll", [1e4, 0.0, -1e4], 1))


@pytest.mark.points(2)
def test_masked_mean_nll_value_and_grad(student, reference, draws, source):
    """masked_mean_nll：数值与梯度都等于 F.cross_entropy | masked_mean_nll: value and gradient equal F.cross_entropy"""
    written_by_hand(source, "masked_mean_nll")
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    for seed, n, v, ignored in [(21, 8, 32, 2), (22, 5, 4, 0), (23, 12, 65, 5), (24, 1, 7, 0)]:
        z, y = random_case(draws.seed(seed), n, v, n_ignored=ignored)
        same(student, reference, probe("ex02.masked", z, y), tol=GRAD_TOL)


@pytest.mark.points(1)
def test_masked_mean_nll_ignore_index(student, reference, draws, source):
    """masked_mean_nll：别的 ignore_index（如 0）| masked_mean_nll: another ignore_index (e.g. 0)"""
    written_by_hand(source, "masked_mean_nll")
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    z, y = random_case(draws.seed(31), 10, 6)
    y[::3] = 0
    same(student, reference, probe("ex02.masked", z, y, ignore_index=0), tol=GRAD_TOL)
    same(student, reference, probe("ex02.masked", z, y, ignore_index=5), tol=GRAD_TOL)


@pytest.mark.points(1)
def test_masked_mean_nll_all_ignored(student, reference, source):
    """masked_mean_nll：没有有效标签时是 NaN（和 torch 一样）| masked_mean_nll: NaN when no label is valid"""
    written_by_hand(source, "masked_mean_nll")
    z, _ = random_case(41, 3, 5)
    same(student, reference, probe("ex02.masked", z, torch.full((3,), -100), grad=False))


@pytest.mark.points(1)
def test_masked_mean_nll_large(student, reference, source):
    """masked_mean_nll：很大的 logits 也不溢出 | masked_mean_nll: no overflow on large logits"""
    written_by_hand(source, "masked_mean_nll")
    z, y = random_case(51, 6, 8, scale=3000.0, n_ignored=1)
    z[0, 0] = 1e4
    same(student, reference, probe("ex02.masked", z, y), tol=Tol(rtol=1e-4, atol=1e-3))


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

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
