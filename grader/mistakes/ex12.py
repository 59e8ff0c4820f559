"""ex12 train_bigram 的已知错误 / known mistakes of train_bigram.

Each override is the reference loop with one thing changed. `get_batch`,
`BigramLanguageModel` and `estimate_loss` are looked up in the module the probe runs (the
probe rebinds an override's globals to the variant module, where these names are the
instrumented / correct pieces it swapped in); the imports below only make the functions
usable on their own.
"""

from grader.judge.mistakes import Mistake
from grader.pieces.bigram import BigramLanguageModel  # noqa: F401
from grader.pieces.estimate_loss import estimate_loss  # noqa: F401
from grader.pieces.get_batch import get_batch  # noqa: F401

SECTION = "bigram 一课「2.49 这条基线」与「优化器：第一次用现成的」"


def _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters, learning_rate,
          batch_size, block_size, seed, *, zero_grad=True, est_iters=None, eval_before=False, final=True):
    import torch

    torch.manual_seed(seed)
    model = BigramLanguageModel(vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    splits = {"train": train_data, "val": val_data}
    history = []
    for it in range(max_iters):
        if it % eval_interval == 0 or (final and it == max_iters - 1):
            if eval_before:
                model.eval()  # 自己切到 eval，却没切回来 / switched to eval, never back
            losses = estimate_loss(model, splits, block_size, batch_size,
                                   eval_iters if est_iters is None else est_iters)
            history.append({"step": it, "train": losses["train"], "val": losses["val"]})
        xb, yb = get_batch(train_data, block_size, batch_size)
        logits, loss = model(xb, yb)
        if zero_grad:
            optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model, history


def _no_zero_grad(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                  eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, zero_grad=False)


def _lr_1e3(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
            eval_iters=200, learning_rate=1e-3, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed)


def _one_batch_eval(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                    eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, est_iters=1)


def _left_in_eval(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                  eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, eval_before=True)


def _no_final_estimate(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                       eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, final=False)


MISTAKES = [
    Mistake(
        id='no_zero_grad',
        section=SECTION,
        zh="梯度没有清零：PyTorch 的梯度是累加的，每一步的梯度都叠在之前的上面",
        en="Gradients are not cleared: PyTorch accumulates them, so every "
        "step adds to the old ones",
        fix={"zh": "每一步 backward 之前 optimizer.zero_grad(set_to_none=True)",
             "en": "optimizer.zero_grad(set_to_none=True) before every backward"},
        overrides={"train_bigram": _no_zero_grad},
        hint=2,
    ),
    Mistake(
        id='lr_1e3',
        section=SECTION,
        zh="学习率太小：同样 3000 步练不够，第 2700 步的 val 还远高于课文的表",
        en="The learning rate is too small: 3000 steps are not enough, val "
        "at step 2700 is far above the lesson's table",
        fix={"zh": "AdamW(model.parameters(), lr=learning_rate)，默认 learning_rate=1e-2（课文脚本的值）",
             "en": "AdamW(model.parameters(), lr=learning_rate), with the default "
                "learning_rate=1e-2 (the script's value)"},
        overrides={"train_bigram": _lr_1e3},
        hint=1,
    ),
    Mistake(
        id='one_batch_eval',
        section=SECTION,
        zh="每次估计只用了一个 batch：没有对 eval_iters 个 batch 取平均",
        en="Each estimate uses one batch: no mean over eval_iters batches",
        fix={"zh": "estimate_loss(model, splits, block_size, batch_size, eval_iters)"
                "：把 eval_iters 传进去",
             "en": "estimate_loss(model, splits, block_size, batch_size, eval_iters)"
                ": pass eval_iters on"},
        overrides={"train_bigram": _one_batch_eval},
        hint=2,
    ),
    Mistake(
        id='left_in_eval',
        section=SECTION,
        zh="估计完 loss 之后模型停在 eval 模式里继续训练",
        en="After an estimate the model goes on training in eval mode",
        fix={"zh": "估计后回到 train 模式（用 estimate_loss 恢复模式，或估计后 model.train()）",
             "en": "Back to train mode after the estimate (estimate_loss restores "
                "the mode, or model.train() after it)"},
        overrides={"train_bigram": _left_in_eval},
        hint=2,
    ),
    Mistake(
        id='no_final_estimate',
        section=SECTION,
        zh="最后一步没有估计：课文的循环在最后一步也估计一次，那次估计抽的 batch 在最后一个训练 batch 之前，"
        "少了它，表的每一行都对，最后一步训练用的 batch 却不同",
        en="No estimate at the last step: the lesson's loop estimates at the last step too, and its "
        "batches are drawn before the last training batch; without it every row of the table matches "
        "but the last step trains on another batch",
        fix={"zh": "每 eval_interval 步估计一次，最后一步（it == max_iters - 1）也估计一次",
             "en": "Estimate every eval_interval steps and at the last step too (it == max_iters - 1)"},
        overrides={"train_bigram": _no_final_estimate},
        hint=2,
    ),
]
