"""Checks for ex11: estimate_loss (bigram lesson, "the 2.49 baseline").

Every check judges what estimate_loss returned (and the model's mode after the call) on
models chosen so that the numbers show how it ran (see grader/probes/ex11.py): the plain
bigram must give the reference's means for the same generator; a model with dropout (eval
mode during the estimate) and one whose loss reads higher while gradients are recorded (no
gradients) must give the plain model's own numbers; a model whose loss counts its calls shows
how many batches each split got and that their mean came back.
"""

import pytest
import torch

from grader.judge import Tol, check_value, probe, same
from grader.judge.compare import kind
from grader.judge.derived import derived
from grader.judge.mistakes import Mistake
from grader.pieces.get_batch import get_batch  # noqa: F401  (fallback, see above)

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
    # the same estimate of another fresh model: numbers the table does not hold, the reference's
    same(student, reference, probe("ex11.lesson_step0", corpus_path, seed=1338),
         label="manual_seed(1338); estimate_loss(BigramLanguageModel(65), {train, val}, 8, 32, 200)")


def step0_facts(result) -> dict:
    """What the lesson's step 0 returned, rounded to 4 decimals like the table; else what came back.

    >>> step0_facts({"train": 4.73051, "val": 4.72409})
    {'train': 4.7305, 'val': 4.7241}
    >>> step0_facts([4.7, 4.7])
    {'returned': 'list'}
    """
    got = {}
    for name in ("train", "val"):
        value = result.get(name) if type(result) is dict else None
        if type(value) in (int, float) or (isinstance(value, torch.Tensor) and value.numel() == 1
                                           and (value.is_floating_point() or value.dtype == torch.int64)):
            got[name] = round(float(value), 4)
        else:
            return {"returned": kind(result)}
    return got


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


# ---- facts the judge derives from the runs' results (probe "ex11.runs") ---------------------
# What the differences between one call's runs mean is decided here, the same way for the
# student, the reference and every mistake.

CLOSE = 1e-6  # two runs of the same computation: equal but for float rounding


def _result(runs, kind_):
    run = runs.get(kind_) if type(runs) is dict else None
    return run.get("result") if type(run) is dict else None


def _same_numbers(a, b) -> bool:
    """Whether two returned dicts hold the same numbers under the same keys."""
    if type(a) is not dict or type(b) is not dict or list(a) != list(b):
        return False
    try:
        return all(abs(float(a[k]) - float(b[k])) <= CLOSE * (1 + abs(float(a[k]))) for k in a)
    except (TypeError, ValueError, RuntimeError):  # not numbers: they say nothing either way
        return False


def depends_on_model(runs) -> bool:
    """Whether the plain model and one with other weights got different numbers: an estimate
    that never asks the model shows no mode or gradient setting (no vacuous pass)."""
    plain, other = _result(runs, "plain"), _result(runs, "other")
    return type(plain) is dict and bool(plain) and not _same_numbers(plain, other)


def as_plain(kind_, fact):
    """The fact that the `kind_` run gave the plain model's numbers (it ran in eval mode, or
    without gradients), named `fact`, beside whether the numbers depend on the model at all."""
    def facts(runs):
        return {"depends_on_model": depends_on_model(runs),
                fact: _same_numbers(_result(runs, kind_), _result(runs, "plain"))}

    return facts


WORDS = {  # what each fact says when it differs
    "depends_on_model": ("估计出来的数应当随模型而变：换一组权重，数就不同（这样才看得出模式和梯度）",
                         "the numbers should depend on the model: other weights, other numbers (only then do they "
                         "show the mode and the gradients)"),
    "no_grad_numbers": ("记录梯度时 loss 会多 1 的模型，应当给出和普通模型一样的数：评估时不记录梯度",
                        "a model whose loss reads 1 higher while gradients are recorded should give the plain "
                        "model's numbers: record no gradients while estimating"),
    "eval_numbers": ("带 dropout 的模型应当给出和普通模型一样的数：评估期间模型要在 eval 模式",
                     "a model with dropout should give the plain model's numbers: the model is in eval mode "
                     "during the estimate"),
    "training_after": ("调用结束后，模型应当回到调用之前的模式", "after the call the model should be back in the mode it had before"),
}


def mode_after(runs):
    """model.training after the call, beside whether the numbers depend on the model at all
    (a run that never asks the model restores nothing)."""
    run = runs.get("plain") if type(runs) is dict else None
    return {"depends_on_model": depends_on_model(runs),
            "training_after": run.get("training_after") if type(run) is dict else None}


def result_form(runs):
    """The returned object's type, its keys in order, and each value's type name."""
    result = _result(runs, "plain")
    if not isinstance(result, dict):
        return {"type": kind(result), "keys": None, "value_types": None}
    return {"type": "dict", "keys": [str(k) for k in result], "value_types": [kind(v) for v in result.values()]}


def numbered_means(runs):
    """What came back from the model whose n-th call has the loss 1 + n/100."""
    return _result(runs, "numbered")


@pytest.mark.points(1)
def test_result_form(student, reference):
    """返回 dict，键按 splits 的顺序，值是 Python float | A dict in the splits' order, Python floats"""
    for case in (CASES[2], CASES[3]):
        same(derived(student, result_form), derived(reference, result_form), probe("ex11.runs", **case),
             label=_label("type, keys, value types", case))


@pytest.mark.points(2)
def test_mean_of_eval_iters_batches(student, reference):
    """每个 split 恰好 eval_iters 个 batch，返回它们 loss 的平均 | eval_iters batches per split, their mean"""
    # the model's n-th call has the loss 1 + n/100 whatever the batch: the means show how many
    # calls each split got, in which order, and that their mean came back, whatever the draws
    for case in CASES[:4]:
        same(derived(student, numbered_means), derived(reference, numbered_means),
             probe("ex11.runs", kinds=("numbered",), **case),
             label=_label("means with a model whose n-th call has the loss 1 + n/100", case))


@pytest.mark.points(1)
def test_no_grad(student, reference):
    """评估时不记录梯度 | No gradients are recorded"""
    facts = as_plain("grad", "no_grad_numbers")
    same(derived(student, facts), derived(reference, facts), probe("ex11.runs", kinds=("plain", "other", "grad"), **CASES[0]),
         label=_label("no gradients", CASES[0]), words=WORDS)


@pytest.mark.points(1)
def test_eval_mode_during(student, reference):
    """评估期间模型在 eval 模式 | The model is in eval mode during the estimate"""
    facts = as_plain("dropout", "eval_numbers")
    for mode in ("train", "eval"):
        same(derived(student, facts), derived(reference, facts),
             probe("ex11.runs", kinds=("plain", "other", "dropout"), seed=6, mode=mode),
             label=f"a model with dropout (model.{mode}() before): estimate_loss gives the numbers without it",
             words=WORDS)


@pytest.mark.points(1)
def test_train_mode_restored(student, reference):
    """调用前是 train，结束后回到 train | A model in train mode is back in train mode"""
    same(derived(student, mode_after), derived(reference, mode_after),
         probe("ex11.runs", kinds=("plain", "other"), seed=7, mode="train"),
         label="model.training after the call (model.train() before)", words=WORDS)


@pytest.mark.points(1)
def test_eval_mode_kept(student, reference):
    """调用前是 eval，结束后仍是 eval | A model in eval mode stays in eval mode"""
    same(derived(student, mode_after), derived(reference, mode_after),
         probe("ex11.runs", kinds=("plain", "other"), seed=8, mode="eval"),
         label="model.training after the call (model.eval() before)", words=WORDS)


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

SECTION = "bigram 一课「2.49 这条基线」"


def _left_in_eval(model, splits, block_size, batch_size, eval_iters, generator=None):
    import torch

    model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits.items():
            losses = []
            for _ in range(eval_iters):
                x, y = get_batch(data, block_size, batch_size, generator=generator)
                _, loss = model(x, y)
                losses.append(loss.item())
            out[name] = sum(losses) / len(losses)
    return out  # 忘了切回原来的模式 / the mode is never restored


def _grad_recorded(model, splits, block_size, batch_size, eval_iters, generator=None):
    was_training = model.training
    model.eval()
    out = {}
    for name, data in splits.items():  # 没有 torch.no_grad() / no torch.no_grad()
        losses = []
        for _ in range(eval_iters):
            x, y = get_batch(data, block_size, batch_size, generator=generator)
            _, loss = model(x, y)
            losses.append(loss.item())
        out[name] = sum(losses) / len(losses)
    model.train(was_training)
    return out


def _single_batch(model, splits, block_size, batch_size, eval_iters, generator=None):
    import torch

    was_training = model.training
    model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits.items():
            x, y = get_batch(data, block_size, batch_size, generator=generator)  # 只抽一个 batch / one batch
            _, loss = model(x, y)
            out[name] = loss.item()
    model.train(was_training)
    return out


def _no_eval(model, splits, block_size, batch_size, eval_iters, generator=None):
    import torch

    was_training = model.training  # 没有 model.eval()：估计在调用前的模式里跑 / no model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits.items():
            losses = []
            for _ in range(eval_iters):
                x, y = get_batch(data, block_size, batch_size, generator=generator)
                _, loss = model(x, y)
                losses.append(loss.item())
            out[name] = sum(losses) / len(losses)
    model.train(was_training)
    return out


def _forced_train(model, splits, block_size, batch_size, eval_iters, generator=None):
    import torch

    model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits.items():
            losses = []
            for _ in range(eval_iters):
                x, y = get_batch(data, block_size, batch_size, generator=generator)
                _, loss = model(x, y)
                losses.append(loss.item())
            out[name] = sum(losses) / len(losses)
    model.train()  # 一律切回 train，原来是 eval 的模型也被改了 / always train()
    return out


MISTAKES = [
    Mistake(
        id='left_in_eval',
        section=SECTION,
        zh="估计完 loss 模型还停在 eval 模式：调用前在 train 模式的模型回不去了",
        en="The model is left in eval mode after the estimate: a model that "
        "was training does not get back to train mode",
        fix={"zh": "进来时 was_training = model.training，结束时 model.train(was_training)",
             "en": "On entry was_training = model.training; at the end model.train(was_training)"},
        overrides={"estimate_loss": _left_in_eval},
        hint=2,
    ),
    Mistake(
        id='grad_recorded',
        section=SECTION,
        zh="评估时记录了梯度：每个 batch 都白白建了计算图",
        en="Gradients are recorded during the estimate: a graph is built "
        "for every batch, for nothing",
        fix={"zh": "把循环放进 with torch.no_grad():（或给函数加 @torch.no_grad()）",
             "en": "Put the loop inside with torch.no_grad(): (or decorate the function "
                "with @torch.no_grad())"},
        overrides={"estimate_loss": _grad_recorded},
        hint=2,
    ),
    Mistake(
        id='single_batch',
        section=SECTION,
        zh="每个 split 只用了一个 batch：没有对 eval_iters 个 batch 取平均，单个 batch 的 loss "
        "噪声很大",
        en="One batch per split: no mean over eval_iters batches, and one "
        "batch's loss is noisy",
        fix={"zh": "每个 split 循环 eval_iters 次 get_batch(...)，收集 loss.item()，取平均",
             "en": "For each split loop eval_iters times over get_batch(...), collect "
                "loss.item(), take the mean"},
        overrides={"estimate_loss": _single_batch},
        hint=1,
    ),
    Mistake(
        id='forced_train',
        section=SECTION,
        zh="结束时一律切回 train：调用前就在 eval 模式的模型被改成了 train 模式",
        en="train mode is forced at the end: a model that was in eval mode "
        "before comes back in train mode",
        fix={"zh": "恢复调用前的模式：model.train(was_training)，不是 model.train()",
             "en": "Restore the mode it had: model.train(was_training), not model.train()"},
        overrides={"estimate_loss": _forced_train},
        hint=3,
    ),
    Mistake(
        id='no_eval',
        section=SECTION,
        zh="估计时模型没有切到 eval 模式：有 Dropout 的模型在 train 模式下每次算出的 loss 都带着随机丢弃",
        en="The model is not switched to eval mode for the estimate: a model with Dropout "
        "computes every loss with random units dropped in train mode",
        fix={"zh": "估计之前 model.eval()（先记下 was_training，结束时 model.train(was_training)）",
             "en": "model.eval() before the estimate (keep was_training first, model.train(was_training) "
                "at the end)"},
        overrides={"estimate_loss": _no_eval},
        hint=1,
    ),
]
