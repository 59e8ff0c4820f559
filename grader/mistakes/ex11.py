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
        id="left_in_eval", section=SECTION,
        zh="估计完 loss 模型还停在 eval 模式：要记下进来时的 model.training，结束时恢复"
           "（见 bigram 一课「2.49 这条基线」：model.eval() … model.train()）",
        en="The model is left in eval mode after the estimate: remember model.training on entry "
           "and restore it at the end (bigram lesson, \"the 2.49 baseline\": model.eval() … model.train())",
        overrides={"estimate_loss": _left_in_eval}, hint=2),
    Mistake(
        id="grad_recorded", section=SECTION,
        zh="评估时记录了梯度：缺了 @torch.no_grad()（或 with torch.no_grad():），白白建计算图"
           "（见 bigram 一课「2.49 这条基线」里的 @torch.no_grad()）",
        en="Gradients are recorded during the estimate: torch.no_grad() is missing, so a graph is "
           "built for nothing (bigram lesson, \"the 2.49 baseline\": @torch.no_grad())",
        overrides={"estimate_loss": _grad_recorded}, hint=2),
    Mistake(
        id="single_batch", section=SECTION,
        zh="每个 split 只抽了一个 batch，没有对 eval_iters 个 batch 取平均；单个 batch 的 loss 噪声很大"
           "（见 bigram 一课「2.49 这条基线」：取 200 个 batch 平均）",
        en="Only one batch per split instead of the mean of eval_iters batches; one batch's loss is "
           "noisy (bigram lesson, \"the 2.49 baseline\": the mean of 200 batches)",
        overrides={"estimate_loss": _single_batch}, hint=1),
    Mistake(
        id="forced_train", section=SECTION,
        zh="结束时一律 model.train()：调用前就在 eval 模式的模型被改成了 train 模式；"
           "要恢复成调用前的模式（model.train(was_training)）（见 bigram 一课「2.49 这条基线」）",
        en="model.train() is forced at the end: a model that was in eval mode before comes back in "
           "train mode; restore the mode it had (model.train(was_training)) (bigram lesson, \"the 2.49 baseline\")",
        overrides={"estimate_loss": _forced_train}, hint=3),
]
