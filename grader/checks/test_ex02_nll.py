"""ex02 手写 NLL 的检查 / checks for the hand-written NLL (5.3, 5.5, 5.7 exercise 2).

Every call runs behind the forbidden-API net of grader/probes/ex02.py: a submission that
calls F.cross_entropy, torch.softmax, torch.logsumexp, … fails with ForbiddenAPIError
naming the API.
"""

import pytest
import torch

from grader.judge import Tol, assert_ok, check_hand, check_value, diagnose, fail, observe, probe, read, same

pytestmark = pytest.mark.exercise("ex02")


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
def test_nll_course_example(student, reference):
    """nll：5.5 的例题，标签 C → 2.44 | nll: the example of 5.5, label C gives 2.44"""
    check_value(student, probe("ex02.nll", COURSE_LOGITS, 2), 2.44, tol=TWO_DECIMALS, reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_hand_nll_label_a(student, reference):
    """HAND_NLL_LABEL_A：标签改为 A 后手算的 NLL | HAND_NLL_LABEL_A: the hand NLL with label A"""
    check_hand(student, reference, read("HAND_NLL_LABEL_A"), tol=TWO_DECIMALS)


@pytest.mark.points(2)
def test_forbidden_apis(student, reference):
    """不许调用现成的 softmax / log-sum-exp / 交叉熵 | no ready-made softmax, log-sum-exp or loss"""
    # Only the use of a forbidden API fails here; whether the values are right is for the
    # other checks, so a wrong answer never reads as "you broke the no-API rule".
    a_call = probe("ex02.forbidden_use", seed=7)
    reference.observe(a_call)  # so a release records it (and the mistakes' answers) for diagnoses
    got = assert_ok(observe(student, a_call), label="stable_softmax, nll, masked_mean_nll")
    seen = got.get("used") if isinstance(got, dict) else None
    used = {name: api for name, api in seen.items() if api} if isinstance(seen, dict) else {}
    unfinished = got.get("unfinished") if isinstance(got, dict) else None
    unfinished = unfinished if isinstance(unfinished, dict) else {}
    if not used and len(unfinished) >= 3:  # the rule is only seen kept by a function that runs to the end
        zh = "、".join(f"{name}（{why}）" for name, why in unfinished.items())
        en = ", ".join(f"{name} ({why})" for name, why in unfinished.items())
        fail(f"没法确认没用禁止的 API：{zh} 都没有运行完。至少一个函数能运行后，这一项才算数",
             f"cannot tell that no forbidden API is used: {en} did not run to the end. This counts once a "
             "function runs", label="stable_softmax, nll, masked_mean_nll",
             expected="运行完、未使用 / runs, none used", got=en)
    if not used and isinstance(seen, dict):
        student.record("forbidden APIs", "未使用 / none used", "未使用 / none used")
        return
    zh = "；".join(f"{name} 用了 {api}" for name, api in used.items())
    en = "; ".join(f"{name} uses {api}" for name, api in used.items())
    fail(f"用了本练习禁止的 API：{zh}。softmax、log-sum-exp 和交叉熵要自己用 max、exp、sum、log 写（见 5.5）",
         f"forbidden APIs used: {en}. Write the softmax, log-sum-exp and loss yourself with max, exp, sum, log (5.5)",
         label="stable_softmax, nll, masked_mean_nll", expected="未使用 / none used",
         got=", ".join(sorted(set(used.values()))), diagnosis=diagnose(student, reference))


@pytest.mark.points(1)
def test_stable_softmax_random(student, reference, draws):
    """stable_softmax：随机 logits，1-D 到 3-D，沿最后一维 | stable_softmax: random logits, 1-D to 3-D, last dim"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    g = torch.Generator().manual_seed(draws.seed(11))
    for shape in [(4,), (3, 7), (2, 3, 5), (1, 1)]:
        same(student, reference, probe("ex02.softmax", torch.randn(shape, generator=g) * 4))


@pytest.mark.points(1)
def test_stable_softmax_large(student, reference):
    """stable_softmax：±1e4 的 logits 也是有限值 | stable_softmax: finite for logits up to ±1e4"""
    # each row shifted by its own max: one global max would turn the last row into 0/0
    same(student, reference, probe("ex02.softmax", torch.tensor(
        [[1e4, 0.0, -1e4], [1e4, 1e4 - 1.0, 3.0], [-1e4, -1e4 + 2.0, -1e4 + 1.0]])))
    same(student, reference, probe("ex02.softmax", torch.tensor([-1e4, -1e4 + 2.0, -1e4 + 1.0])))


@pytest.mark.points(1)
def test_nll_random_and_large(student, reference, draws):
    """nll：随机例子（列表与张量）和很大的 logits | nll: random cases (list and tensor) and large logits"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    g = torch.Generator().manual_seed(draws.seed(12))
    for v in (3, 10, 65):
        z = (torch.randn(v, generator=g) * 3).tolist()
        label = int(torch.randint(v, (1,), generator=g))
        same(student, reference, probe("ex02.nll", z, label))
        same(student, reference, probe("ex02.nll", z, label, as_tensor=True))
    same(student, reference, probe("ex02.nll", [1e4, 0.0, -1e4], 1))


@pytest.mark.points(2)
def test_masked_mean_nll_value_and_grad(student, reference, draws):
    """masked_mean_nll：数值与梯度都等于 F.cross_entropy | masked_mean_nll: value and gradient equal F.cross_entropy"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    for seed, n, v, ignored in [(21, 8, 32, 2), (22, 5, 4, 0), (23, 12, 65, 5), (24, 1, 7, 0)]:
        z, y = random_case(draws.seed(seed), n, v, n_ignored=ignored)
        same(student, reference, probe("ex02.masked", z, y), tol=GRAD_TOL)


@pytest.mark.points(1)
def test_masked_mean_nll_ignore_index(student, reference, draws):
    """masked_mean_nll：别的 ignore_index（如 0）| masked_mean_nll: another ignore_index (e.g. 0)"""
    # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
    z, y = random_case(draws.seed(31), 10, 6)
    y[::3] = 0
    same(student, reference, probe("ex02.masked", z, y, ignore_index=0), tol=GRAD_TOL)
    same(student, reference, probe("ex02.masked", z, y, ignore_index=5), tol=GRAD_TOL)


@pytest.mark.points(1)
def test_masked_mean_nll_all_ignored(student, reference):
    """masked_mean_nll：没有有效标签时是 NaN（和 torch 一样）| masked_mean_nll: NaN when no label is valid"""
    z, _ = random_case(41, 3, 5)
    same(student, reference, probe("ex02.masked", z, torch.full((3,), -100), grad=False))


@pytest.mark.points(1)
def test_masked_mean_nll_large(student, reference):
    """masked_mean_nll：很大的 logits 也不溢出 | masked_mean_nll: no overflow on large logits"""
    z, y = random_case(51, 6, 8, scale=3000.0, n_ignored=1)
    z[0, 0] = 1e4
    same(student, reference, probe("ex02.masked", z, y), tol=Tol(rtol=1e-4, atol=1e-3))
