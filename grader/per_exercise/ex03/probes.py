"""Probes for ex03 (weight_bytes with a torch.dtype, count_params on real modules).

The modules are built here, under a forked RNG seeded by the probe, so every subject
counts the same modules and the judge's global RNG is left as it was.
"""

import torch
import torch.nn as nn

from grader.probes.seeding import seed_global


def weight_bytes_dtype(mod, n_params, dtype_name):
    """weight_bytes(n_params, torch.<dtype_name>): a dtype does not travel as plain data."""
    return mod.weight_bytes(n_params, getattr(torch, dtype_name))


class _Tied(nn.Module):
    """Embedding and LM head sharing one Parameter (as GPT-2 does)."""

    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)  # [V, C]
        self.ln_f = nn.LayerNorm(n_embd)  # 2C
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)  # [V, C]
        self.lm_head.weight = self.wte.weight  # tied: one Parameter in two places


class _SharedBlock(nn.Module):
    """The same Linear registered under two names, plus a buffer."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)  # 20
        self.b = self.a  # the same module again
        self.c = nn.Linear(4, 3, bias=False)  # 12
        self.register_buffer("mask", torch.ones(10, 10))  # a buffer: not a parameter


def _modules(kind):
    if kind == "plain":
        return {
            "linear_8_32_nobias": nn.Linear(8, 32, bias=False),
            "linear_8_32": nn.Linear(8, 32),
            "embedding_32_8": nn.Embedding(32, 8),
            "mlp": nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8)),
            "layernorm": nn.LayerNorm(16),
        }
    if kind == "frozen_and_buffers":
        frozen = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 6))
        frozen[0].weight.requires_grad_(False)
        all_frozen = nn.Linear(5, 5)
        all_frozen.requires_grad_(False)
        return {
            "batchnorm_with_buffers": nn.BatchNorm1d(7),
            "frozen_embedding": frozen,
            "all_frozen": all_frozen,
        }
    if kind == "tied":
        from grader.tinygpt import TinyGPT

        tiny = TinyGPT(vocab_size=32, block_size=8, n_embd=8, n_head=2, n_layer=1)
        tiny.lm_head.weight = tiny.token_embedding_table.weight
        return {
            "tied_embedding_head": _Tied(50, 16),
            "shared_module": _SharedBlock(),
            "tinygpt_tied": tiny,
        }
    raise ValueError(kind)


def count_params_of(mod, kind, seed=0):
    """count_params on each module of a named set: {name: count}."""
    with torch.random.fork_rng():
        seed_global(seed)
        modules = _modules(kind)
    return {name: mod.count_params(m) for name, m in modules.items()}
