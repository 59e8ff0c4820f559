"""Probes for ex13 (byte-level BPE).

What train_bpe and bpe_encode return comes back as returned (the worker converts nothing):
the contract pins `list[((int, int), int)]` and `list[int]`, and the judge compares the types
too (a list where the pair's tuple belongs, a float id, a tensor of ids fail, saying how to
get the contract's type).
"""

from __future__ import annotations

from grader.probes.common import attribute


def train(mod, text, vocab_size):
    """train_bpe(text, vocab_size), as returned."""
    return attribute(mod, "train_bpe")(text, vocab_size)


def encode(mod, text, merges):
    """bpe_encode(text, merges), as returned (`merges` given as the contract's tuples)."""
    return attribute(mod, "bpe_encode")(text, [(tuple(pair), idx) for pair, idx in merges])


def decode(mod, ids, merges):
    """bpe_decode(ids, merges)."""
    return attribute(mod, "bpe_decode")(list(ids), [(tuple(pair), idx) for pair, idx in merges])


def roundtrip(mod, train_text, vocab_size, texts):
    """With the student's own merges: decode(encode(t)) for every t (should give t back), and
    decode(ids + ids), a sequence encode never returned (t twice; a decode that looks up what
    encode saw decodes it for real)."""
    merges = attribute(mod, "train_bpe")(train_text, vocab_size)
    enc, dec = attribute(mod, "bpe_encode"), attribute(mod, "bpe_decode")
    out = []
    for t in texts:
        ids = enc(t, merges)
        out.append([dec(ids, merges), dec(list(ids) * 2, merges) if isinstance(ids, list) else None])
    return out
