"""Correct course pieces that later exercises build on: get_batch (ex08),
BigramLanguageModel (ex09), estimate_loss (ex11).

课程后面的练习会用到前面练习写的零件（ex11 用 get_batch，ex12 用 get_batch、
BigramLanguageModel 和 estimate_loss）。评分 ex11 / ex12 时，探针把学生模块里这些名字
换成这里的正确实现，这样前面练习里的错误只扣一次分，不会在后面的练习里再扣一遍。

When ex11 / ex12 are graded, their probes replace these module globals of the student's
file (`mod.get_batch = ...`) with the plain, correct versions below, so that a bug in an
earlier exercise is not charged twice. They follow the contract in EXERCISES.md exactly
(the same random draws as the reference), so swapping them in changes nothing for a
correct submission.
"""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_corpus(path) -> str:
    """The corpus as text (probes read it inside the worker; `path` is a DataFile or a str)."""
    with open(path, encoding="utf-8") as f:
        return f.read()


@functools.lru_cache(maxsize=1)
def lesson_splits(path):
    """The lesson's data: ids over the sorted characters, split 90/10 by position.

    Returns (train_data, val_data, vocab_size); cached, since several probes of one worker
    train on it (ex11, ex12).
    """
    text = read_corpus(path)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)  # (N,)
    n = int(0.9 * len(data))
    return data[:n], data[n:], len(chars)


def get_batch(data, block_size, batch_size, generator=None):
    """ex08: one randint call, then x[b] = data[ix[b]:ix[b]+T], y shifted by one."""
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    x = torch.stack([data[i : i + block_size] for i in ix])  # (B, T)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])  # (B, T)
    return x, y


class BigramLanguageModel(nn.Module):
    """ex09: one nn.Embedding(V, V) table; forward returns (logits (B, T, V), loss or None)."""

    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)  # (B, T, C)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))  # ()
        return logits, loss

    def generate(self, idx, max_new_tokens, generator=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx)  # (B, T, C)
            probs = F.softmax(logits[:, -1, :], dim=-1)  # (B, C)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):
    """ex11: per split, the mean of eval_iters batch losses; no grad, eval mode, mode restored."""
    was_training = model.training
    model.eval()
    out = {}
    try:
        with torch.no_grad():
            for name, data in splits.items():
                losses = []
                for _ in range(eval_iters):
                    x, y = get_batch(data, block_size, batch_size, generator=generator)  # (B, T)
                    _, loss = model(x, y)
                    losses.append(loss.item())
                out[name] = sum(losses) / len(losses)
    finally:
        model.train(was_training)
    return out
