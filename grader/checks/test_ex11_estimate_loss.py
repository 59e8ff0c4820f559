"""Checks for ex11: estimate_loss (bigram lesson, "the 2.49 baseline").

The student's estimate_loss runs on a recording bigram model (see grader/probes/ex11.py):
the values must equal the reference's for the same generator, and the recording says how
many batches each split got, in which mode, and whether gradients were recorded.
"""

import pytest
import torch

from grader.judge import Tol, check_value, probe, same
from grader.judge.compare import kind
from grader.judge.derived import derived

pytestmark = pytest.mark.exercise("ex11")

# (seed, split names, lengths, block_size, batch_size, eval_iters)
CASES = [
    dict(seed=0),
    dict(seed=1, lengths=(500, 80), block_size=5, batch_size=7, eval_iters=13),
    dict(seed=2, names=("val", "train"), lengths=(90, 400), block_size=3, batch_size=2, eval_iters=4),
    dict(seed=3, names=("a", "b", "c"), lengths=(40, 60, 30), block_size=4, batch_size=3, eval_iters=6),
    dict(seed=4, lengths=(20, 12), block_size=8, batch_size=1, eval_iters=1),
]


def _label(what, case):
    names = case.get("names", ("train", "val"))
    return (f"{what}: estimate_loss(model, {{{', '.join(names)}}}, block_size={case.get('block_size', 8)}, "
            f"batch_size={case.get('batch_size', 4)}, eval_iters={case.get('eval_iters', 10)}, generator=…)")


@pytest.mark.public
@pytest.mark.points(2)
def test_lesson_step0(student, reference, corpus_path):
    """课文第 0 步：train 4.7305，val 4.7241 | The lesson's step 0: train 4.7305, val 4.7241"""
    check_value(derived(student, step0_facts), probe("ex11.lesson_step0", corpus_path), {"train": 4.7305, "val": 4.7241},
                label="manual_seed(1337); estimate_loss(BigramLanguageModel(65), {train, val}, 8, 32, 200)",
                tol=Tol(rtol=0, atol=1e-9), reference=derived(reference, step0_facts))


LESSON_ITERS = 200  # eval_iters of the lesson's step 0: its batches per split


def step0_facts(run) -> dict:
    """What the lesson's step 0 returned, rounded to 4 decimals like the table, when each value
    is the mean of the losses the model computed for that split (its first LESSON_ITERS
    forwards given targets train, the next val); else what came back and why it does not
    count. Numbers that are not the model's own (the table's, written in) are told apart.

    >>> import torch
    >>> calls = [{"loss": torch.tensor(4.0)}] * 200 + [{"loss": torch.tensor(3.0)}] * 200
    >>> step0_facts({"result": {"train": 4.0, "val": 3.0}, "calls": calls})
    {'train': 4.0, 'val': 3.0}
    >>> step0_facts({"result": {"train": 4.7305, "val": 4.7241}, "calls": []})["tied"]
    'not the mean of the losses the model computed (0 forward calls given targets)'
    """
    result = run.get("result") if type(run) is dict else None
    got = {}
    for name in ("train", "val"):
        value = result.get(name) if type(result) is dict else None
        if type(value) in (int, float) or (isinstance(value, torch.Tensor) and value.numel() == 1
                                           and (value.is_floating_point() or value.dtype == torch.int64)):
            got[name] = round(float(value), 4)
        else:
            return {"returned": kind(result)}
    losses = [float(c["loss"]) for c in _calls(run) if isinstance(c.get("loss"), torch.Tensor) and c["loss"].numel() == 1]
    if len(losses) == 2 * LESSON_ITERS:
        means = {"train": sum(losses[:LESSON_ITERS]) / LESSON_ITERS, "val": sum(losses[LESSON_ITERS:]) / LESSON_ITERS}
        if all(abs(round(means[k], 4) - got[k]) <= 1e-9 for k in got):
            return got
    return {**got, "tied": f"not the mean of the losses the model computed ({len(losses)} forward calls given targets)"}


@pytest.mark.points(2)
def test_values_with_generator(student, reference):
    """同一个 generator → 与参考相同的平均 loss | The same generator gives the reference's means"""
    for case in CASES:
        same(student, reference, probe("ex11.values", **case), label=_label("values", case))


@pytest.mark.points(1)
def test_global_generator(student, reference):
    """不给 generator 时用全局随机数 | Without a generator, the global one"""
    case = dict(seed=5, use_generator=False)
    same(student, reference, probe("ex11.values", **case),
         label="torch.manual_seed(…); estimate_loss(model, {train, val}, 8, 4, 10)")


# ---- facts the judge derives from one observed call (probe "ex11.run") --------------------------
# The worker reports the returned value, each forward call's record and the mode after; what
# those mean is decided here, the same way for the student, the reference and every mistake.

K = 16  # ids per split (grader/probes/ex11.py): split i holds ids [K i, K i + K)


def _calls(run):
    return [c for c in run["calls"] if isinstance(c, dict)] if isinstance(run, dict) and isinstance(run.get("calls"), list) else []


def _split_of(entry) -> int:
    first = entry.get("first_id")
    return int(first) // K if isinstance(first, torch.Tensor) and first.dim() == 0 else -1


def result_form(run):
    """The returned object's type, its keys in order, and each value's type name."""
    result = run.get("result") if isinstance(run, dict) else None
    if not isinstance(result, dict):
        return {"type": kind(result), "keys": None, "value_types": None}
    return {"type": "dict", "keys": [str(k) for k in result], "value_types": [kind(v) for v in result.values()]}


def batches_per_split(names):
    def facts(run):
        counts = {name: 0 for name in names}
        for entry in _calls(run):
            split = _split_of(entry)
            if 0 <= split < len(names):
                counts[names[split]] += 1
        return counts

    return facts


def mean_of_seen_batches(names):
    def facts(run):
        result = run.get("result") if isinstance(run, dict) else None
        out = {}
        for i, name in enumerate(names):
            seen = [float(e["loss"]) for e in _calls(run) if _split_of(e) == i and isinstance(e.get("loss"), torch.Tensor)]
            returned = result.get(name) if isinstance(result, dict) else None
            out[name] = {"returned": returned if type(returned) is float else None,
                         "mean_seen": sum(seen) / len(seen) if seen else None}
        return out

    return facts


NO_FORWARD = "no forward call"  # what a run that never called the model says to a check of how it called it


def grad_recorded(run):
    """Whether any forward call ran with gradient recording on (a run that never called the
    model has nothing to show: no vacuous pass)."""
    calls = _calls(run)
    return any(e.get("grad") is True for e in calls) if calls else NO_FORWARD


def modes_during(run):
    """The distinct values of model.training seen by the forward calls, sorted."""
    return sorted({e.get("training") for e in _calls(run) if isinstance(e.get("training"), bool)})


def mode_after(run):
    """model.training after the call; a run that never called the model leaves the mode as it
    was, which restores nothing: it says so instead (no vacuous pass)."""
    if not _calls(run):
        return NO_FORWARD
    return run.get("training_after") if isinstance(run, dict) else None


def _names(case):
    return list(case.get("names", ("train", "val")))


@pytest.mark.points(1)
def test_result_form(student, reference):
    """返回 dict，键按 splits 的顺序，值是 Python float | A dict in the splits' order, Python floats"""
    for case in (CASES[2], CASES[3]):
        same(derived(student, result_form), derived(reference, result_form), probe("ex11.run", **case),
             label=_label("type, keys, value types", case))


@pytest.mark.points(2)
def test_mean_of_eval_iters_batches(student, reference):
    """每个 split 恰好 eval_iters 个 batch，返回它们 loss 的平均 | eval_iters batches per split, their mean"""
    for case in CASES[:4]:
        facts = batches_per_split(_names(case))
        same(derived(student, facts), derived(reference, facts), probe("ex11.run", **case),
             label=_label("batches per split", case))
    for case in CASES[1:4]:
        facts = mean_of_seen_batches(_names(case))
        same(derived(student, facts), derived(reference, facts), probe("ex11.run", **case),
             label=_label("returned vs mean of the batches' losses", case))


@pytest.mark.points(1)
def test_no_grad(student, reference):
    """评估时不记录梯度 | No gradients are recorded"""
    same(derived(student, grad_recorded), derived(reference, grad_recorded), probe("ex11.run", **CASES[0]),
         label=_label("grad recorded", CASES[0]))


@pytest.mark.points(1)
def test_eval_mode_during(student, reference):
    """评估期间模型在 eval 模式 | The model is in eval mode during the estimate"""
    for mode in ("train", "eval"):
        same(derived(student, modes_during), derived(reference, modes_during), probe("ex11.run", seed=6, mode=mode),
             label=f"model.training during the call (model.{mode}() before)")


@pytest.mark.points(1)
def test_train_mode_restored(student, reference):
    """调用前是 train，结束后回到 train | A model in train mode is back in train mode"""
    same(derived(student, mode_after), derived(reference, mode_after), probe("ex11.run", seed=7, mode="train"),
         label="model.training after the call (model.train() before)")


@pytest.mark.points(1)
def test_eval_mode_kept(student, reference):
    """调用前是 eval，结束后仍是 eval | A model in eval mode stays in eval mode"""
    same(derived(student, mode_after), derived(reference, mode_after), probe("ex11.run", seed=8, mode="eval"),
         label="model.training after the call (model.eval() before)")
