"""练习 12：训练 bigram 基线 —— 把课文的训练脚本写成一个函数，复现 2.49 那张表。

见 bigram 一课「2.49 这条基线」与「优化器：第一次用现成的」：torch.manual_seed(1337)，
建 BigramLanguageModel，AdamW(lr=1e-2)，每 eval_interval 步估计一次 train/val loss，
然后抽一个训练 batch、前向、zero_grad、反向、step。课文那张表
（step 0: 4.7305 / 4.7241 … step 2700: 2.4738 / 2.4911）就是这个函数的默认参数跑出来的
（torch 2.13，CPU，单线程）。

Exercise 12: the lesson's training script as a function, reproducing its table
("the 2.49 baseline", "the optimizer"). Left out: devices, generation after training,
learning-rate schedules.

三个依赖都来自你自己之前的练习（08 的 get_batch、09 的 BigramLanguageModel、11 的
estimate_loss）；评分时 grader 会把它们换成正确的实现，所以之前练习的错误不会在这里
被重复扣分。请用这里 import 进来的名字，不要自己另写一个模型类。
All three pieces come from your own earlier exercises (get_batch from ex08,
BigramLanguageModel from ex09, estimate_loss from ex11); when grading, the grader swaps in
correct ones, so an earlier bug is not charged twice. Use the names imported here; do not
write another model class in this file.
"""

import torch

from ex08_get_batch import get_batch
from ex09_bigram import BigramLanguageModel
from ex11_estimate_loss import estimate_loss


def train_bigram(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                 eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    """训练一个 bigram 模型，返回 (model, history)。

    Train a BigramLanguageModel and return (model, history), where history is a list of
    {"step": int, "train": float, "val": float}, one entry per estimate.
    抽随机数的顺序是钉死的（这样才能逐位复现课文的表）/ The order of random draws is pinned
    (that is what makes the table reproducible), all from the global torch generator:
      1. torch.manual_seed(seed)
      2. model = BigramLanguageModel(vocab_size)          # 初始化权重 / initial weights
      3. optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
      4. for it in range(max_iters):
           if it % eval_interval == 0 or it == max_iters - 1:
               estimate_loss(model, {"train": train_data, "val": val_data},
                             block_size, batch_size, eval_iters)   # 先 train 后 val
           xb, yb = get_batch(train_data, block_size, batch_size)
           forward -> optimizer.zero_grad(set_to_none=True) -> backward -> step
    梯度每一步都要清零：PyTorch 的梯度是累加的。
    Gradients must be cleared every step: PyTorch accumulates them.

    例（课文）/ Example (the lesson), tiny Shakespeare, the defaults:
        model, history = train_bigram(train_data, val_data, 65)
        history[0]  -> {"step": 0, "train": 4.7305, "val": 4.7241}
        history[9]  -> {"step": 2700, "train": 2.4738, "val": 2.4911}
        history[-1]["step"] -> 2999
    """
    ### BEGIN SOLUTION
    torch.manual_seed(seed)
    model = BigramLanguageModel(vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    splits = {"train": train_data, "val": val_data}
    history = []
    for it in range(max_iters):
        if it % eval_interval == 0 or it == max_iters - 1:
            losses = estimate_loss(model, splits, block_size, batch_size, eval_iters)
            history.append({"step": it, "train": losses["train"], "val": losses["val"]})
        xb, yb = get_batch(train_data, block_size, batch_size)  # (B, T), (B, T)
        logits, loss = model(xb, yb)  # (B, T, C), ()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model, history
    ### END SOLUTION
