"""Probes for ex13 (byte-level BPE).

The merges a student's train_bpe returns are normalised to `[((a, b), new_id), …]` of
ints (lists or tuples are both fine), and encode's ids to a list of ints, so a correct
answer in another container style compares equal to the reference's.
"""

from __future__ import annotations

from grader.probes.common import _attribute


def _merges(merges):
    if not isinstance(merges, (list, tuple)):
        return {"type": type(merges).__name__}  # compared with a list: "type differs"
    return [((int(pair[0]), int(pair[1])), int(idx)) for pair, idx in merges]


def train(mod, text, vocab_size):
    """train_bpe(text, vocab_size), normalised."""
    return _merges(_attribute(mod, "train_bpe")(text, vocab_size))


def encode(mod, text, merges):
    """bpe_encode(text, merges) as a list of ints."""
    return [int(i) for i in _attribute(mod, "bpe_encode")(text, [tuple(m) for m in merges])]


def decode(mod, ids, merges):
    """bpe_decode(ids, merges)."""
    return _attribute(mod, "bpe_decode")(list(ids), [tuple(m) for m in merges])


def roundtrip(mod, train_text, vocab_size, texts):
    """With the student's own merges: decode(encode(t)) for every t (should give t back)."""
    merges = _attribute(mod, "train_bpe")(train_text, vocab_size)
    enc, dec = _attribute(mod, "bpe_encode"), _attribute(mod, "bpe_decode")
    return [dec(enc(t, merges), merges) for t in texts]
