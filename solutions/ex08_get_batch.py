"""练习 08：抽一批 (B, T) 的输入和目标。

见 bigram 一课「一个片段含 T 条样本」与「(B, T) 两个维度」：随机抽 B 个起点，每个起点
切出长度 T 的输入 x 和右移一位的目标 y；一行 x/y 含 T 条训练样本
（[18] → 47，[18, 47] → 56，…）。

Exercise 08: sample a (B, T) batch of inputs and shifted targets, from the bigram lesson
("one chunk holds T examples" and "the two dimensions (B, T)").
Left out: moving the batch to a device, pinned memory.
"""

import torch


def get_batch(data, block_size, batch_size, generator=None):
    """随机抽 batch_size 个起点，返回 (x, y)，都是 [B, T] 的 long 张量，y 是 x 右移一位。

    Sample batch_size start indices with ONE call
    `torch.randint(len(data) - block_size, (batch_size,), generator=generator)`
    (so the same generator state gives the same batch as the reference), then
    x[b] = data[ix[b] : ix[b]+block_size], y[b] = data[ix[b]+1 : ix[b]+block_size+1].
    起点最大是 len(data) - block_size - 1：这样 y 的最后一个也还在数据里。

    例 / Example: data = torch.arange(10), block_size=3, batch_size=2, 若抽到 ix = [0, 6]
    / if ix = [0, 6] is drawn:
        x = [[0, 1, 2], [6, 7, 8]]
        y = [[1, 2, 3], [7, 8, 9]]
    """
    ### BEGIN SOLUTION
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    x = torch.stack([data[i : i + block_size] for i in ix])  # (B, T)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])  # (B, T)
    return x, y
    ### END SOLUTION


def context_target_pairs(x_row, y_row):
    """一行 (x, y) 里的 T 条训练样本：[(x_row[:t+1] 作为 list, int(y_row[t])) for t in 0..T-1]。

    The T training examples one row holds: (the context x_row[:t+1] as a list of ints,
    the target int(y_row[t])). x_row / y_row: lists or 1-D tensors of the same length T.

    例（课文）/ Example (the lesson), x = train_data[:8], y = train_data[1:9]:
        context_target_pairs([18, 47, 56, 57, 58, 1, 15, 47],
                             [47, 56, 57, 58, 1, 15, 47, 58])
        -> [([18], 47), ([18, 47], 56), …, ([18, 47, 56, 57, 58, 1, 15, 47], 58)]
    """
    ### BEGIN SOLUTION
    pairs = []
    for t in range(len(y_row)):
        context = [int(v) for v in x_row[: t + 1]]  # (t+1,)
        target = int(y_row[t])
        pairs.append((context, target))
    return pairs
    ### END SOLUTION
