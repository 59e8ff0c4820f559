"""Probes for ex04 (prefix_logits, generate): small deterministic models whose logits show
how they were called, and what the student's function returned, nothing else.

A "model" for this exercise is any callable mapping ids [B, t] to logits [B, t, V]. The
probes build small deterministic ones from a seeded generator; the judge's global RNG is
never touched (forked where a model is initialised).

- `MixModel` is deliberately NOT causal: every position also sees the mean of the whole
  context. So returning `model(idx)` once differs from T prefix calls, and cropping the
  context in `generate` changes the distribution.
- `TinyGPT` (grader/tinygpt.py) is causal: T prefix calls give what one forward gives.
- `_Numbered` (generate) adds to its k-th call's logits row k of a fixed random table: an
  extra or a missing call shifts every later call's distribution, so the tokens drawn after
  it differ from the reference's.
- `_Repeats` (prefix_logits) adds a fixed bias to a call whose context length it has seen
  before: T prefix calls see none, an extra one (a full forward first) changes a row.
"""

import torch
import torch.nn as nn

from grader.per_exercise.ex04.fixtures import MixModel
from grader.probes.seeding import seed_global

BIAS_ROWS = 64  # calls before _Numbered's table starts over (more than any check makes)


def _table(rows, vocab_size, seed, scale=3.0):
    g = torch.Generator().manual_seed(10_000 + seed)
    return torch.randn(rows, vocab_size, generator=g) * scale  # (rows, V)


class _Numbered(nn.Module):
    """`model` (still an nn.Module: .eval(), .parameters() work), its k-th call's logits moved
    by row k of a fixed table (the count lives in a closure of this probe's call)."""

    def __init__(self, model, vocab_size, seed):
        super().__init__()
        self.model = model
        bias = _table(BIAS_ROWS, vocab_size, seed)
        calls = iter(range(10**9))
        self._bias = lambda: bias[next(calls) % BIAS_ROWS]  # (V,)

    def forward(self, idx):
        return self.model(idx) + self._bias()  # (B, t, V)


class _Repeats(nn.Module):
    """`model`, its logits moved by a fixed bias when called with a context length it has
    already been called with."""

    def __init__(self, model, vocab_size, seed):
        super().__init__()
        self.model = model
        bias = _table(1, vocab_size, seed)[0]  # (V,)
        seen: set = set()

        def moved(t):
            again = t in seen
            seen.add(t)
            return bias if again else torch.zeros_like(bias)

        self._moved = moved

    def forward(self, idx):
        return self.model(idx) + self._moved(idx.shape[1])  # (B, t, V)


def _tinygpt(vocab_size, block_size, seed):
    from grader.tinygpt import TinyGPT

    with torch.random.fork_rng():
        seed_global(seed)
        model = TinyGPT(vocab_size=vocab_size, block_size=block_size, n_embd=8, n_head=2, n_layer=2)
    model.eval()
    return model


def _model(kind, vocab_size, seed, block_size=8):
    if kind == "mix":
        return MixModel(vocab_size, seed)
    if kind == "tinygpt":
        return _tinygpt(vocab_size, block_size, seed)
    raise ValueError(kind)


def _ids(seed, shape, vocab_size):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(vocab_size, shape, generator=g)  # (B, T)


def prefix(mod, kind="mix", vocab_size=11, B=2, T=5, seed=0):
    """prefix_logits on a fixed model that moves a repeated context length's logits: (B, T, V) as returned."""
    model = _Repeats(_model(kind, vocab_size, seed), vocab_size, seed)
    idx = _ids(seed + 1, (B, T), vocab_size)
    with torch.no_grad():
        return mod.prefix_logits(model, idx)


def prefix_vs_forward(mod, vocab_size=13, B=2, T=6, seed=0):
    """prefix_logits with a causal model (TinyGPT): the reference's answer equals one forward."""
    model = _tinygpt(vocab_size, 8, seed)
    idx = _ids(seed + 1, (B, T), vocab_size)
    with torch.no_grad():
        return mod.prefix_logits(model, idx)  # (B, T, V)


def generate(mod, kind="mix", vocab_size=11, B=2, T=3, max_new_tokens=6, block_size=None, temperature=None,
             seed=0, gseed=0, use_generator=True):
    """generate with a seeded torch.Generator (or the global RNG, seeded and forked here), on a
    model whose k-th call is moved by its own bias: the ids as returned (B, T + max_new_tokens)."""
    model = _Numbered(_model(kind, vocab_size, seed, block_size=block_size or 8), vocab_size, seed)
    idx = _ids(seed + 1, (B, T), vocab_size)
    kwargs = {}
    if block_size is not None:
        kwargs["block_size"] = block_size
    if temperature is not None:
        kwargs["temperature"] = temperature
    with torch.no_grad():
        if use_generator:
            kwargs["generator"] = torch.Generator().manual_seed(gseed)
            out = mod.generate(model, idx.clone(), max_new_tokens, **kwargs)
        else:
            with torch.random.fork_rng():
                seed_global(gseed)
                out = mod.generate(model, idx.clone(), max_new_tokens, **kwargs)
    return out


def generate_samples(mod, temperature, n=4000, vocab_size=5, gseed=0):
    """One new token for n copies of the same context: generate's output as returned, (n, 3).
    The judge counts how often each id came out (the statistics are its to compute)."""
    model = MixModel(vocab_size, seed=3, scale=1.0)
    idx = torch.full((n, 2), 1, dtype=torch.long)  # (n, 2)
    with torch.no_grad():
        return mod.generate(model, idx, 1, temperature=temperature, generator=torch.Generator().manual_seed(gseed))


