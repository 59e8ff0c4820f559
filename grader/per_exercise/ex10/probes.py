"""Probes for ex10 (small_init_): statistics of the refilled table, and the loss of a
fresh, correct bigram (from grader.pieces, not the student's ex09) after small_init_."""

import math

import torch
import torch.nn as nn

from grader.pieces import piece
from grader.fixtures.corpus import read_corpus
from grader.probes.seeding import seed_global


def init_run(mod, vocab_size, std=None, seed=0):
    """small_init_ on a fresh nn.Embedding(V, V), as observed: what it returned, whether the
    table is still the same Parameter, its requires_grad, and the table before and after.

    `std=None` calls small_init_(embedding) (the default std 0.01 is then expected). The
    statistics (in place, N(0, std²) within 5 sigma) are the judge's to derive
    (grader/per_exercise/ex10/checks.py, `init_facts`).
    """
    seed_global(seed)
    emb = nn.Embedding(vocab_size, vocab_size)
    param = emb.weight
    before = param.detach().clone()  # (V, V)
    ret = mod.small_init_(emb) if std is None else mod.small_init_(emb, std=std)
    weight = emb._parameters.get("weight")  # the module's own table (the probe's Embedding, not the student's)
    return {
        "returned": ret,
        "same_parameter": weight is param,
        "requires_grad": weight.requires_grad if isinstance(weight, torch.Tensor) else None,
        "before": before,
        "after": weight.detach().clone() if isinstance(weight, torch.Tensor) else weight,
    }


def fresh_loss_near_ln_v(mod, path, seed=1337, batches=10, batch_size=32, block_size=8):
    """A correct bigram on tiny Shakespeare, built with torch.manual_seed(seed), then
    small_init_ on its table: the mean loss over a few batches before and after, and ln V (the
    judge reads whether the default init was above ln V + 0.1, as the lesson says, and whether
    the table small_init_ left gives a loss within 0.05 of ln V)."""
    text = read_corpus(path)
    stoi = {ch: i for i, ch in enumerate(sorted(set(text)))}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)  # (N,)
    V = len(stoi)
    seed_global(seed)
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
    return {"before": before, "after": mean_loss(), "ln_v": math.log(V)}
