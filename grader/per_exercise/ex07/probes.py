"""Probes for ex07 (split_train_val) on the corpus, read inside the worker."""

import torch

from grader.fixtures.corpus import read_corpus


def corpus_split_text(mod, path):
    """Split the corpus string with the default train_frac: lengths, the seam, kinds."""
    text = read_corpus(path)
    train, val = mod.split_train_val(text)
    return {
        "len_train": len(train),
        "len_val": len(val),
        "kinds": [type(train).__name__, type(val).__name__],
        "train_tail": str(train[-30:]),
        "val_head": str(val[:30]),
        "rejoined_is_text": train + val == text,
    }


def corpus_split_tensor(mod, path, train_frac=0.9):
    """Split the encoded corpus (a 1-D long tensor) by position."""
    text = read_corpus(path)
    stoi = {ch: i for i, ch in enumerate(sorted(set(text)))}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)  # (N,)
    train, val = mod.split_train_val(data, train_frac)
    return {
        "kinds": [type(train).__name__, type(val).__name__],
        "shapes": [tuple(train.shape), tuple(val.shape)],
        "train_tail": train[-20:].clone(),
        "val_head": val[:20].clone(),
        "rejoined_is_data": bool(torch.equal(torch.cat([train, val]), data)),
    }


def corpus_split_lengths(mod, path):
    """(len(train), len(val)) for the corpus string with the default train_frac."""
    train, val = mod.split_train_val(read_corpus(path))
    return (len(train), len(val))
