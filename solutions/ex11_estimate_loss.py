"""练习 11：估计 loss —— 抽 eval_iters 个 batch 取平均，train 和 val 分开报。

见 bigram 一课「2.49 这条基线」：单个 batch 的 loss 噪声很大，所以每个 split 抽
eval_iters（课文里是 200）个 batch，各自算 loss 再平均。评估期间不记录梯度
（@torch.no_grad()），模型切到 eval 模式，结束后恢复到调用之前的模式。

Exercise 11: estimate the loss as the mean over eval_iters batches per split, from the
bigram lesson ("the 2.49 baseline"). No gradients, eval mode during, the caller's mode
restored after. Left out: devices, mixed precision, distributed averaging.

get_batch 来自你自己的练习 08；评分时 grader 会换成正确的实现，所以练习 08 的错误
不会在这里被重复扣分。
get_batch comes from your own exercise 08; when grading, the grader swaps in a correct
one, so a bug in ex08 is not charged twice.
"""

import torch

from ex08_get_batch import get_batch


def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):
    """对每个 split 抽 eval_iters 个 batch，返回 {名字: 平均 loss（Python float）}。

    Return {split name: mean of eval_iters batch losses as a Python float}, split names in
    the order of `splits` (a dict name -> 1-D long tensor). Each batch is one
    `get_batch(data, block_size, batch_size, generator=generator)` call (the same
    generator throughout); `model(x, y)` returns `(logits, loss)`. No gradients are
    recorded; the model is in eval mode during the estimate and back in the mode it was in
    before (train OR eval) after.
    只把模型恢复到调用前的模式：调用前是 eval，结束后也还是 eval（不要一律 model.train()）。

    例（课文）/ Example (the lesson), the untrained bigram model, eval_iters=200:
        estimate_loss(model, {"train": train_data, "val": val_data}, 8, 32, 200)
        -> {"train": 4.7305, "val": 4.7241}   # 训练第 0 步的那一行 / the table's step 0
    """
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    out = {}
    try:
        with torch.no_grad():
            for name, data in splits.items():
                losses = []
                for _ in range(eval_iters):
                    x, y = get_batch(data, block_size, batch_size, generator=generator)  # (B, T), (B, T)
                    logits, loss = model(x, y)  # (B, T, C), ()
                    losses.append(loss.item())
                out[name] = sum(losses) / len(losses)
    finally:
        model.train(was_training)
    return out
    ### END SOLUTION
