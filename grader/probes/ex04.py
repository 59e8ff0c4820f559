"""Probes for ex04 (prefix_logits, generate): fake models that count their calls.

A "model" for this exercise is any callable mapping ids [B, t] to logits [B, t, V]. The
probes build small deterministic ones from a seeded generator, wrap them to record every
call's context length, and return plain data: the result, the number of calls and the
lengths. The judge's global RNG is never touched (forked where a model is initialised).

- `MixModel` is deliberately NOT causal: every position also sees the mean of the whole
  context. So returning `model(idx)` once differs from T prefix calls, and cropping the
  context in `generate` changes the distribution.
- `TinyGPT` (grader/tinygpt.py) is causal: T prefix calls give what one forward gives.
"""

import torch
import torch.nn as nn

from grader.fixtures.ex04 import MixModel
from grader.probes.seeding import seed_global


def Recorder(model, lengths: list):  # noqa: N802 - builds a model
    """Wraps a model (still an nn.Module: .eval(), .parameters() work); appends the length of
    every context it is called with to `lengths`, a closure: not an attribute of the model the
    student is handed (`model.lengths.clear()` has nothing to clear)."""

    class _Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, idx):
            lengths.append(idx.shape[1])  # an int of the tensor's shape (torch's, not the student's)
            return self.model(idx)

    return _Recorder()


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
    """prefix_logits on a fixed model: the logits, the number of calls, the sorted lengths."""
    lengths: list = []
    model = Recorder(_model(kind, vocab_size, seed), lengths)
    idx = _ids(seed + 1, (B, T), vocab_size)
    with torch.no_grad():
        out = mod.prefix_logits(model, idx)
    return {"logits": out, "calls": len(lengths), "lengths": sorted(lengths)}


def prefix_vs_forward(mod, vocab_size=13, B=2, T=6, seed=0):
    """prefix_logits with a causal model (TinyGPT): the reference's answer equals one forward."""
    model = _tinygpt(vocab_size, 8, seed)
    idx = _ids(seed + 1, (B, T), vocab_size)
    with torch.no_grad():
        return mod.prefix_logits(model, idx)  # (B, T, V)


def generate(mod, kind="mix", vocab_size=11, B=2, T=3, max_new_tokens=6, block_size=None, temperature=None,
             seed=0, gseed=0, use_generator=True):
    """generate with a seeded torch.Generator (or the global RNG, seeded and forked here):
    the tokens, the number of model calls and the context length of each call."""
    lengths: list = []
    model = Recorder(_model(kind, vocab_size, seed, block_size=block_size or 8), lengths)
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
    return {"idx": out, "calls": len(lengths), "lengths": list(lengths)}


def generate_samples(mod, temperature, n=4000, vocab_size=5, gseed=0):
    """One new token for n copies of the same context: generate's output as returned, (n, 3).
    The judge counts how often each id came out (the statistics are its to compute)."""
    model = MixModel(vocab_size, seed=3, scale=1.0)
    idx = torch.full((n, 2), 1, dtype=torch.long)  # (n, 2)
    with torch.no_grad():
        return mod.generate(model, idx, 1, temperature=temperature, generator=torch.Generator().manual_seed(gseed))


