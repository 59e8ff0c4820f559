"""Probes for ex11 (estimate_loss): the student's estimate_loss called on models chosen so that
what it returns shows how it ran, and what it returned, nothing else.

Each run calls `estimate_loss` once, on splits whose data holds only the ids [16 i, 16 i + 16)
for split i, with the module's `get_batch` replaced by the correct one for the call (see
`grader.pieces`: a bug in ex08 is not charged again here). The model is one of:

- "plain": the correct bigram model (grader.pieces);
- "other": the same class with other weights: an estimate of the model gives other numbers;
- "dropout": the plain model's weights with dropout on its logits: in train mode its losses
  are noisy, in eval mode it is the plain model;
- "grad": the plain model, its loss reading 1 higher while gradients are being recorded;
- "numbered": whatever the batch, its n-th forward call (n = 1, 2, …) has the loss 1 + n/100
  (grader.fixtures.numbered): the mean an estimate returns shows which calls it averaged.

The judge compares what came back (grader/per_exercise/ex11/checks.py): "dropout" and
"grad" must give the plain model's numbers, "plain" and "other" must differ. Every probe seeds
its own generators inside `torch.random.fork_rng`, so the process's global generator is left
as it was.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.fixtures.corpus import lesson_splits
from grader.fixtures.numbered import Numbered
from grader.pieces import piece
from grader.probes.common import attribute, swapped
from grader.probes.seeding import seed_global

K = 16  # ids per split
KINDS = ("plain", "other", "dropout", "grad", "numbered")
DROPOUT = 0.5


def _with_dropout(model):
    """Dropout on the table's output, i.e. on the bigram's logits, in train mode only."""
    model.token_embedding_table.register_forward_hook(
        lambda table, _inputs, out: F.dropout(out, DROPOUT, training=model.training))
    return model


def _grad_class():
    class GradAware(piece("BigramLanguageModel")):
        """The correct bigram, its loss 1 higher while gradients are being recorded."""

        def forward(self, idx, targets=None):
            logits, loss = super().forward(idx, targets)
            if loss is not None and torch.is_grad_enabled():
                loss = loss + 1.0
            return logits, loss

    return GradAware


def _model(kind: str, vocab_size: int, seed: int):
    if kind not in KINDS:
        raise ValueError(kind)
    seed_global(seed + 500 if kind == "other" else seed)
    if kind == "numbered":
        return Numbered(vocab_size)
    if kind == "grad":
        return _grad_class()(vocab_size)
    model = piece("BigramLanguageModel")(vocab_size)
    return _with_dropout(model) if kind == "dropout" else model


def _run(mod, kind, seed=0, names=("train", "val"), lengths=(300, 120), block_size=8, batch_size=4,
         eval_iters=10, mode="train", use_generator=True):
    """Call the student's estimate_loss once on a `kind` model: (result, model.training after)."""
    estimate = attribute(mod, "estimate_loss")
    g = torch.Generator().manual_seed(seed)
    splits = {name: torch.randint(K * i, K * (i + 1), (n,), generator=g) for i, (name, n) in enumerate(zip(names, lengths))}
    with torch.random.fork_rng(devices=[]):
        model = _model(kind, K * len(names), seed)
        model.train(mode == "train")
        seed_global(seed + 1000)  # the global generator, for calls without one (and dropout)
        kwargs = {"generator": torch.Generator().manual_seed(seed + 1)} if use_generator else {}
        with swapped(mod, "estimate_loss", get_batch=piece("get_batch")):
            result = estimate(model, splits, block_size, batch_size, eval_iters, **kwargs)
    return result, torch.nn.Module.__getattribute__(model, "training")


def values(mod, **params):
    """The returned dict on the plain model (values as returned: floats, or whatever the student gave)."""
    return _run(mod, "plain", **params)[0]


def runs(mod, kinds=("plain",), **params):
    """One call per model kind, the same splits, seeds and mode each time: {kind: {"result": as
    returned, "training_after": model.training after the call}}. What the differences between
    them mean is the judge's to derive (grader/per_exercise/ex11/checks.py)."""
    out = {}
    for kind in kinds:
        result, training = _run(mod, kind, **params)
        out[kind] = {"result": result, "training_after": training}
    return out


def lesson_step0(mod, corpus_path, seed=1337):
    """The lesson's step 0: torch.manual_seed(seed) (the lesson's 1337), a fresh bigram model,
    then estimate_loss on tiny Shakespeare with the global generator (eval_iters=200, B=32,
    T=8): what it returned, as returned (the judge rounds it like the lesson's table)."""
    estimate = attribute(mod, "estimate_loss")
    train_data, val_data, vocab_size = lesson_splits(corpus_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            seed_global(seed)
            model = piece("BigramLanguageModel")(vocab_size)  # the piece's own draws: the lesson's weights
            with swapped(mod, "estimate_loss", get_batch=piece("get_batch")):
                return estimate(model, {"train": train_data, "val": val_data}, 8, 32, 200)
    finally:
        torch.set_num_threads(threads)
