"""ex05 TinyGPT 标签错位、展平与 loss 的检查 / checks for the label shift, flattening and loss (5.6, 5.7 exercise 5)."""

import pytest
import torch

from grader.judge import Tol, assert_ok, call, diagnose, fail, observe, probe, same
from grader.judge.compare import short
from grader.judge.sealed import Sealed
from grader.judge.verdicts import HIDDEN_ANSWER
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex05")

# Section 5.6's shapes are SHAPE_ANSWERS, worked out by hand: the checks take them from the
# reference (a student release holds them sealed, grader.judge.sealed), never as a literal.
COURSE_LABELS = [[4, 2, 8, -100], [2, 9, 1, -100]]
GRAD_TOL = Tol(rtol=1e-4, atol=1e-6)


def _check_shapes(student, got, expected: dict, where: str, *, hand: bool = False, reference=None):
    """Key by key, expected vs got, so the message names the stage that is wrong.

    `hand`: SHAPE_ANSWERS, filled in by hand: a wrong entry is named, its right shape is not
    shown (only whether the number of dimensions is right). An expected entry may be sealed (a
    student release): it is matched, and a wrong one is only wrong."""
    if not isinstance(got, dict):
        fail(f"{where} 应当返回 dict", f"{where} must return a dict", label=where,
             expected="dict", got=type(got).__name__)
    missing = short([k for k in expected if k not in got], 120)  # the student's keys by their short form:
    extra = short([k for k in got if k not in expected], 120)    # a key may be a 16 MB tensor
    if missing != "[]" or extra != "[]":
        fail(f"{where} 的键不对：缺少 {missing}，多出 {extra}", f"{where} has the wrong keys: missing {missing}, "
             f"unexpected {extra}", label=where, expected=short(list(expected), 120), got=short(list(got), 120))
    for key, want in expected.items():
        label = f'{where}["{key}"]'
        value = got[key]
        if key == "n_valid":
            ok = type(value) is int and value == want
        else:
            ok = isinstance(value, tuple) and value == want
        if not ok and hand:
            if key == "n_valid":
                counted = type(value) is int
                if isinstance(want, Sealed):  # a student release: right or wrong, no more
                    why_zh, why_en = ("数得不对", "a wrong count") if counted else ("应当是整数", "it should be an int")
                else:
                    why_zh = ("数多了" if counted and value > want else "数少了") if counted else "应当是整数"
                    why_en = ("too many" if counted and value > want else "too few") if counted else "it should be an int"
            else:
                rank = isinstance(value, tuple) and len(value) == len(want)
                why_zh = "维数对，某一维的大小不对" if rank else "维数不对"
                why_en = "the right number of dimensions, a wrong size" if rank else "the wrong number of dimensions"
            fail(f"{label} 不对（{why_zh}）。这是要你对照 5.6 手填的，正确答案不显示",
                 f"{label} is wrong ({why_en}). It is yours to fill in from 5.6: the right value is not shown",
                 label=label, expected=HIDDEN_ANSWER, got=short(value), answer=str(want),
                 diagnosis=diagnose(student, reference))
        if not ok:
            fail(f"{label} 不对：期望 {want}，得到 {short(value)}", f"{label} is wrong: expected {want}, got {short(value)}",
                 label=label, expected=str(want), got=short(value), diagnosis=diagnose(student, reference))
    # one line for the whole pipeline: [B,T] → [B,T,C] → [B,T,V] → [B*T,V] → () (the student's: all agree)
    stages = [k for k in ("input_ids", "hidden", "logits", "flat_logits", "loss") if k in expected]
    chain = " → ".join(str(got[k]) for k in stages)
    student.record(where, chain, chain)


def _readable(expected: dict, got) -> dict:
    """The expected shapes a picture may draw: every plain one, and a sealed one only where the
    student's shape is it (so it is the student's own); the others are left out (drawn as ?)."""
    got = got if isinstance(got, dict) else {}
    return {k: (got[k] if isinstance(v, Sealed) else v) for k, v in expected.items()
            if not isinstance(v, Sealed) or (k in got and got[k] == v)}


@pytest.mark.public
@pytest.mark.points(1)
def test_make_lm_batch_course(student, reference):
    """make_lm_batch：5.6 的数据，pad 换成 -100 | make_lm_batch: section 5.6's data, pad becomes -100"""
    token_ids = torch.tensor([[1, 4, 2, 8, 0], [3, 2, 9, 1, 0]])  # (B, T+1)
    same(student, reference, call("make_lm_batch", token_ids, pad_id=0))


@pytest.mark.points(1)
def test_make_lm_batch_random(student, reference):
    """make_lm_batch：随机 batch；没有 pad_id、pad 在中间 | make_lm_batch: random batches, no pad_id, pads in the middle"""
    g = torch.Generator().manual_seed(501)
    token_ids = torch.randint(10, (3, 7), generator=g)  # (B, T+1)
    same(student, reference, call("make_lm_batch", token_ids))
    same(student, reference, call("make_lm_batch", token_ids, pad_id=3))
    same(student, reference, call("make_lm_batch", token_ids, pad_id=99))  # no label equals it
    same(student, reference, call("make_lm_batch", torch.tensor([[5, 6]]), pad_id=6))  # T = 1


@pytest.mark.public
@pytest.mark.points(1)
def test_lm_loss_course_snippet(student, reference):
    """lm_loss：5.6 那段可执行核对（seed 42 的 embedding + lm_head）| lm_loss: section 5.6's runnable check"""
    same(student, reference, probe("ex05.course_snippet"), label="lm_loss(logits (2, 4, 32), labels)")


@pytest.mark.points(2)
def test_lm_loss_random(student, reference):
    """lm_loss：随机 logits 与 -100，数值与梯度 | lm_loss: random logits and -100 labels, value and gradient"""
    for B, T, V, seed, ignored in [(2, 4, 32, 511, 2), (3, 5, 7, 512, 0), (1, 1, 9, 513, 0), (4, 3, 65, 514, 5)]:
        same(student, reference, probe("ex05.loss_and_grad", B, T, V, seed=seed, n_ignored=ignored), tol=GRAD_TOL,
             label=f"lm_loss(logits ({B}, {T}, {V}), labels), loss.backward()")


@pytest.mark.points(1)
def test_lm_loss_one_tinygpt_step(student, reference):
    """一步 TinyGPT：make_lm_batch → model → lm_loss，带 pad | one TinyGPT step with padding"""
    same(student, reference, probe("ex05.one_step", pad_id=0, seed=521),
         label="lm_loss(TinyGPT(make_lm_batch(…, pad_id=0)))")


@pytest.mark.public
@pytest.mark.points(2)
def test_trace_shapes_course_setting(student, reference):
    """trace_shapes：5.6 的设定 B=2、T=4、C=8、V=32 | trace_shapes: section 5.6's setting"""
    a_call = probe("ex05.trace", B=2, T=4, C=8, V=32, labels=COURSE_LABELS)
    expected = assert_ok(reference.observe(a_call))  # recorded (sealed) in a release, with the mistakes' answers
    got = assert_ok(observe(student, a_call), label="trace_shapes(TinyGPT(V=32, C=8), (2, 4), (2, 4))")
    # drawn as the pipeline [B,T] → [B,T,C] → [B,T,V] → (), the expected shapes beside the
    # student's (from the setting, never inferred from the student's own `hidden`)
    student.attach("shapes", {"got": got, "expected": _readable(expected, got)})
    _check_shapes(student, got, expected, "trace_shapes", reference=reference)


@pytest.mark.points(1)
def test_trace_shapes_other_sizes(student, reference):
    """trace_shapes：别的 B、T、C、V | trace_shapes: other B, T, C, V"""
    for B, T, C, V, heads in [(3, 5, 12, 20, 3), (1, 7, 4, 65, 1)]:
        c = probe("ex05.trace", B=B, T=T, C=C, V=V, n_head=heads, seed=B * 100 + T)
        expected = assert_ok(reference.observe(c))
        got = assert_ok(observe(student, c), label=c.label)
        if got != expected:
            student.attach("shapes", {"got": got, "expected": expected})
        _check_shapes(student, got, expected, f"trace_shapes(B={B}, T={T}, C={C}, V={V})", reference=reference)
    # every argument matters: labels that cannot be these logits' targets must stop the trace
    _labels_are_used(student, reference)


# What a worker answers when the student's code did not raise on its own (grader.judge.student_errors)
_NOT_RAISED_BY_THE_CODE = {"Timeout", "WorkerDied", "MissingName", "MissingSubmissionFile", "MalformedAnswer"}


def _labels_are_used(student, reference):
    """trace_shapes given labels (3, 6) beside inputs (3, 5) must fail: flat_labels and the loss
    made from `labels` cannot fit 15 positions. A trace that returns its shapes anyway made them
    from something else (the inputs), so it does not use the labels it is given."""
    label = "trace_shapes(model, input_ids (3, 5), labels (3, 6))"
    obs = observe(student, probe("ex05.trace_longer_labels"))
    if not obs.ok and not obs.error.get("not_implemented") and not obs.error.get("import_error") \
            and obs.error_type not in _NOT_RAISED_BY_THE_CODE:
        student.record(label, "raises", f"raises {obs.error_type}")
        return
    assert_ok(obs, label)
    fail("trace_shapes 没有用传进来的 labels：labels 比 logits 多一列时，flat_labels 和 loss 本该对不上而出错，"
         "它却照常返回了形状（flat_labels 和 loss 要用 labels 来算）",
         "trace_shapes does not use the labels it is given: with labels one column longer than the logits, "
         "flat_labels and the loss cannot fit and should fail, but it returned its shapes as usual (flat_labels "
         "and the loss come from labels)", label=label, expected="raises (labels do not fit)", got=short(obs.value),
         diagnosis=diagnose(student, reference))


@pytest.mark.public
@pytest.mark.points(2)
def test_shape_answers(student, reference):
    """SHAPE_ANSWERS：手填 5.6 设定的形状与 n_valid | SHAPE_ANSWERS: section 5.6's shapes and n_valid by hand"""
    a_call = probe("ex05.shape_answers")
    expected = assert_ok(reference.observe(a_call))  # recorded (sealed) in a release, for diagnoses too
    got = assert_ok(observe(student, a_call), label="SHAPE_ANSWERS")
    _check_shapes(student, got, expected, "SHAPE_ANSWERS", hand=True, reference=reference)


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

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
