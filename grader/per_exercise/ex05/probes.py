"""Probes for ex05 (make_lm_batch, lm_loss, trace_shapes, SHAPE_ANSWERS) on TinyGPT.

Models are built here under a forked RNG with a fixed seed (the judge's global RNG is left
as it was), so every subject sees the same weights. Shapes come back as tuples of ints
(a torch.Size or a list is accepted and turned into a tuple).
"""

import torch

from grader.probes.common import read_constant
from grader.probes.seeding import seed_global
from grader.tinygpt import TinyGPT


def _shape(value):
    """As returned: the contract says tuples (a torch.Size is one); a list or a tuple of
    tensors fails in the judge, saying how to get a tuple of ints."""
    return value


def _shapes(result):
    if not isinstance(result, dict):
        return result
    return {k: (v if k == "n_valid" else _shape(v)) for k, v in result.items()}


def tinygpt(vocab_size=32, block_size=8, n_embd=8, n_head=2, n_layer=2, seed=0):
    with torch.random.fork_rng():
        seed_global(seed)
        model = TinyGPT(vocab_size=vocab_size, block_size=block_size, n_embd=n_embd, n_head=n_head, n_layer=n_layer)
    model.eval()
    return model


def random_labels(seed, B, T, V, n_ignored=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(V, (B, T), generator=g)  # (B, T)
    if n_ignored:
        flat = labels.view(-1)  # (B*T,)
        flat[torch.randperm(B * T, generator=g)[:n_ignored]] = -100
    return labels


def trace(mod, B=2, T=4, C=8, V=32, n_head=2, n_layer=2, seed=0, labels=None):
    """trace_shapes(model, input_ids, labels) for a seeded TinyGPT; shapes as tuples."""
    model = tinygpt(vocab_size=V, block_size=max(T, 8), n_embd=C, n_head=n_head, n_layer=n_layer, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    input_ids = torch.randint(V, (B, T), generator=g)  # (B, T)
    labels = random_labels(seed + 2, B, T, V, n_ignored=1) if labels is None else torch.as_tensor(labels)
    with torch.no_grad():
        return _shapes(mod.trace_shapes(model, input_ids, labels))


def trace_longer_labels(mod, B=3, T=5, C=12, V=20, seed=7):
    """trace_shapes(model, input_ids (B, T), labels (B, T + 1)), as returned: labels one column
    longer than the logits have positions. A trace whose flat_labels and loss come from
    `labels` cannot go through (view, reshape or the loss raises); one that builds them from
    something else returns its shapes as usual. The judge reads which happened."""
    model = tinygpt(vocab_size=V, block_size=max(T, 8), n_embd=C, n_head=3, n_layer=1, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    input_ids = torch.randint(V, (B, T), generator=g)  # (B, T)
    labels = random_labels(seed + 2, B, T + 1, V, n_ignored=1)  # (B, T+1)
    with torch.no_grad():
        return _shapes(mod.trace_shapes(model, input_ids, labels))


def shape_answers(mod):
    """SHAPE_ANSWERS, with lists read as tuples."""
    return _shapes(read_constant(mod, "SHAPE_ANSWERS"))


def course_snippet(mod):
    """Section 5.6's runnable check, with the student's lm_loss in place of the cross-entropy line."""
    with torch.random.fork_rng():
        seed_global(42)
        token_ids = torch.tensor([[1, 4, 2, 8], [3, 2, 9, 1]])
        embedding = torch.nn.Embedding(32, 8)
        lm_head = torch.nn.Linear(8, 32, bias=False)
    hidden = embedding(token_ids)  # (B, T, C) = (2, 4, 8)
    logits = lm_head(hidden)  # (B, T, V) = (2, 4, 32)
    labels = torch.tensor([[4, 2, 8, -100], [2, 9, 1, -100]])  # (B, T)
    loss = mod.lm_loss(logits, labels)
    return loss.detach() if isinstance(loss, torch.Tensor) else loss


def loss_and_grad(mod, B, T, V, seed=0, n_ignored=0, scale=2.0):
    """lm_loss on random logits: {"loss": 0-dim tensor, "grad": d loss / d logits}."""
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(B, T, V, generator=g) * scale).requires_grad_()  # (B, T, V)
    labels = random_labels(seed + 1, B, T, V, n_ignored=n_ignored)  # (B, T)
    loss = mod.lm_loss(logits, labels)
    if not isinstance(loss, torch.Tensor):
        return {"loss": loss}
    grad = None
    if loss.requires_grad and loss.numel() == 1:
        loss.reshape(()).backward()
        grad = logits.grad
    return {"loss": loss.detach(), "grad": grad}


def one_step(mod, pad_id=0, B=3, T=6, V=20, C=12, seed=0):
    """One TinyGPT step: make_lm_batch → model → lm_loss, with padded rows."""
    model = tinygpt(vocab_size=V, block_size=8, n_embd=C, n_head=3, n_layer=2, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    token_ids = torch.randint(1, V, (B, T + 1), generator=g)  # (B, T+1) no pad yet
    token_ids[0, -2:] = pad_id  # a padded tail
    token_ids[B - 1, -4:] = pad_id
    input_ids, labels = mod.make_lm_batch(token_ids, pad_id=pad_id)
    logits = model(input_ids)  # (B, T, V)
    loss = mod.lm_loss(logits, labels)
    return {"labels": labels, "loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
