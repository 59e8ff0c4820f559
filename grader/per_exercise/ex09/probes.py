"""Probes for ex09 (BigramLanguageModel, one_hot_lookup, flat_index).

A model is built with torch.manual_seed(0) and then given a fixed table drawn here from a
seeded generator, so the student's and the reference's models hold the same weights
whatever their __init__ drew.
"""

import torch
import torch.nn as nn

from grader.probes.seeding import seed_global


def _model(mod, vocab_size, wseed):
    seed_global(0)
    model = mod.BigramLanguageModel(vocab_size)
    g = torch.Generator().manual_seed(wseed)
    weight = torch.randn(vocab_size, vocab_size, generator=g)  # (V, V)
    with torch.no_grad():
        model.token_embedding_table.weight.copy_(weight)
    return model


def structure(mod, vocab_size):
    """Parameter count, the table's shape, and that the model is an nn.Module."""
    seed_global(0)
    model = mod.BigramLanguageModel(vocab_size)
    return {
        "is_nn_module": isinstance(model, nn.Module),
        "n_params": sum(p.numel() for p in model.parameters()),
        "table_is_embedding": isinstance(model.token_embedding_table, nn.Embedding),
        "table_shape": tuple(model.token_embedding_table.weight.shape),
    }


def forward(mod, vocab_size, idx, targets=None, wseed=0):
    """(logits, loss) for fixed weights. Flattened (B*T, V) logits given with targets are
    reshaped to (B, T, V) (the contract accepts both); loss as a float (or None)."""
    model = _model(mod, vocab_size, wseed)
    idx = torch.as_tensor(idx, dtype=torch.long)
    if targets is not None:
        targets = torch.as_tensor(targets, dtype=torch.long)
    logits, loss = model(idx, targets)
    B, T = idx.shape
    if targets is not None and logits.dim() == 2 and tuple(logits.shape) == (B * T, vocab_size):
        logits = logits.view(B, T, vocab_size)  # (B, T, V)
    if isinstance(loss, torch.Tensor):
        loss = loss.detach()
    return {"logits": logits.detach(), "loss": loss}


def loss_gradient(mod, vocab_size, idx, targets, wseed=0):
    """The gradient of the loss with respect to the table (is the loss differentiable, and right?)."""
    model = _model(mod, vocab_size, wseed)
    _, loss = model(torch.as_tensor(idx, dtype=torch.long), torch.as_tensor(targets, dtype=torch.long))
    loss.backward()
    return model.token_embedding_table.weight.grad


def generate(mod, vocab_size, idx, max_new_tokens, wseed=0, gseed=0):
    """generate with a seeded generator: the same weights and draws give the same tokens."""
    model = _model(mod, vocab_size, wseed)
    g = torch.Generator().manual_seed(gseed)
    idx = torch.as_tensor(idx, dtype=torch.long)
    out = model.generate(idx, max_new_tokens, generator=g)
    return out


def generate_global(mod, vocab_size, idx, max_new_tokens, wseed=0, gseed=0):
    """generate without a generator, after torch.manual_seed(gseed)."""
    model = _model(mod, vocab_size, wseed)
    seed_global(gseed)
    out = model.generate(torch.as_tensor(idx, dtype=torch.long), max_new_tokens)
    return out


def generate_peaked(mod, vocab_size, idx, max_new_tokens, gseed=0):
    """A table whose row i puts almost all mass on (i + 1) % V: the path shows which
    position the next token is read from, without depending on floating-point details."""
    seed_global(0)
    model = mod.BigramLanguageModel(vocab_size)
    weight = torch.full((vocab_size, vocab_size), -30.0)
    for i in range(vocab_size):
        weight[i, (i + 1) % vocab_size] = 30.0
    with torch.no_grad():
        model.token_embedding_table.weight.copy_(weight)
    g = torch.Generator().manual_seed(gseed)
    return model.generate(torch.as_tensor(idx, dtype=torch.long), max_new_tokens, generator=g)


def flat_rows(mod, B, T, C):
    """flat_index(b, t, T) for every position (b, t) of a (B, T, C) batch, as returned (the
    judge checks that each is the row of view(B*T, C) holding (b, t), and is an int)."""
    return [[mod.flat_index(b, t, T) for t in range(T)] for b in range(B)]
