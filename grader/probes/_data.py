"""The lesson's data as probes read it, inside the worker (the corpus path is a DataFile)."""

import functools

import torch


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
