"""ex11 estimate_loss 的已知错误 / known mistakes of estimate_loss.

Each override is the reference with one thing changed. Names such as `get_batch` are
looked up in the module the probe runs (the probes rebind an override's globals to the
variant module, where `get_batch` is the correct one the probe swapped in); the import
below only makes the functions usable on their own.
"""

from grader.judge.mistakes import Mistake
from grader.pieces.get_batch import get_batch  # noqa: F401  (fallback, see above)

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
