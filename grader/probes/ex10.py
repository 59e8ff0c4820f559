"""Probes for ex10 (small_init_): statistics of the refilled table, and the loss of a
fresh, correct bigram (from grader.pieces, not the student's ex09) after small_init_."""

import math

import torch
import torch.nn as nn

from grader.pieces import piece
from grader.probes._data import read_corpus


def init_stats(mod, vocab_size, std=None, seed=0, full=True):
    """small_init_ on a fresh nn.Embedding(V, V): in place, returns None, N(0, std²) within 5 sigma.

    `std=None` calls small_init_(embedding) (the default std 0.01 is then expected).
    `full=False` reports only the statistics (for checks about the std argument).
    """
    torch.manual_seed(seed)
    emb = nn.Embedding(vocab_size, vocab_size)
    param = emb.weight
    before = param.detach().clone()
    ret = mod.small_init_(emb) if std is None else mod.small_init_(emb, std=std)
    target = 0.01 if std is None else std
    w = emb.weight.detach().double()  # (V, V)
    n = w.numel()
    mean, sd = float(w.mean()), float(w.std())
    # sample mean ~ N(0, std²/n); sample std ~ N(std, std²/(2n))
    mean_ok = abs(mean) <= 5 * target / math.sqrt(n)
    band = 5 * target / math.sqrt(2 * n)
    if sd == 0:
        sd_kind = "zero"
    elif sd < target - band:
        sd_kind = "too small"
    elif sd > target + band:
        sd_kind = "too large"
    else:
        sd_kind = "ok"
    if sd_kind in ("too small", "too large"):  # how far off, so std² and std/10 read differently
        sd_kind += f" (×{sd / target:.2g})"
    if not full:
        return {"refilled": not torch.equal(emb.weight.detach(), before),
                "mean_within_5_sigma": mean_ok, "std": sd_kind}
    return {
        "returns_none": ret is None,
        "same_parameter": emb.weight is param,
        "requires_grad": bool(emb.weight.requires_grad),
        "shape": tuple(emb.weight.shape),
        "refilled": not torch.equal(emb.weight.detach(), before),
        "mean_within_5_sigma": mean_ok,
        "std": sd_kind,
    }


def fresh_loss_near_ln_v(mod, path, seed=1337, batches=10, batch_size=32, block_size=8):
    """A correct bigram on tiny Shakespeare, built with torch.manual_seed(seed), then
    small_init_ on its table: is the mean loss over a few batches within 0.05 of ln V?
    (Also reports whether the default init's loss was above ln V + 0.1, as the lesson says.)"""
    text = read_corpus(path)
    stoi = {ch: i for i, ch in enumerate(sorted(set(text)))}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)  # (N,)
    V = len(stoi)
    torch.manual_seed(seed)
    model = piece("BigramLanguageModel")(V)

    def mean_loss():
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            losses = []
            for _ in range(batches):
                x, y = piece("get_batch")(data, block_size, batch_size, generator=g)  # (B, T)
                losses.append(float(model(x, y)[1]))
        return sum(losses) / len(losses)

    before = mean_loss()
    mod.small_init_(model.token_embedding_table)
    after = mean_loss()
    return {
        "default_init_above_ln_v": before > math.log(V) + 0.1,
        "after_within_0.05_of_ln_v": abs(after - math.log(V)) <= 0.05,
    }
