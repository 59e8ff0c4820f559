"""Probes for ex11 (estimate_loss).

The student's `estimate_loss` is called on a recording bigram model (the correct one from
`grader.pieces`, logging each forward call: which split the batch came from, the model's mode,
whether gradients were being recorded, the batch's loss). The module's `get_batch` is
replaced by the correct one for the call (see `grader.pieces`: a bug in ex08 is not charged
again here). Split i's data holds only the ids [16 i, 16 i + 16), so every batch says
which split it came from whatever order or style the student's loop has.

Every probe seeds its own generators inside `torch.random.fork_rng`, so the global torch
generator of the process is left as it was.
"""

from __future__ import annotations

import torch

from grader.pieces import piece
from grader.fixtures.corpus import lesson_splits
from grader.probes.common import attribute, swapped
from grader.probes.seeding import seed_global

K = 16  # ids per split


def _recorder_class(log: list):
    """The correct bigram model (grader.pieces), logging every forward call into `log`.

    Made per run (the piece is imported only in the workers of the exercises that build on
    it), and the log is a closure, not an attribute of the model the student is handed:
    `model.log.clear()` has nothing to clear.
    """

    class Recorder(piece("BigramLanguageModel")):
        """The correct bigram model, logging every forward call."""

        def forward(self, idx, targets=None):
            logits, loss = super().forward(idx, targets)  # (B, T, C), ()
            log.append({
                "first_id": idx.detach().reshape(-1)[0].clone(),  # 0-dim: split i holds ids [K i, K i + K)
                "training": self.training,
                "grad": torch.is_grad_enabled(),
                "loss": None if loss is None else loss.detach().clone(),
                "shape": tuple(idx.shape),
            })
            return logits, loss

    return Recorder


def _run(mod, seed=0, names=("train", "val"), lengths=(300, 120), block_size=8, batch_size=4,
         eval_iters=10, mode="train", use_generator=True):
    """Call the student's estimate_loss once; return (result, the forward log, model.training after)."""
    estimate = attribute(mod, "estimate_loss")
    log: list = []
    with torch.random.fork_rng(devices=[]):
        seed_global(seed)
        model = _recorder_class(log)(K * len(names))
        splits = {name: torch.randint(K * i, K * (i + 1), (n,)) for i, (name, n) in enumerate(zip(names, lengths))}
        model.train(mode == "train")
        seed_global(seed + 1000)  # the global generator, for calls without one
        kwargs = {"generator": torch.Generator().manual_seed(seed + 1)} if use_generator else {}
        with swapped(mod, "estimate_loss", get_batch=piece("get_batch")):
            result = estimate(model, splits, block_size, batch_size, eval_iters, **kwargs)
    return result, log, torch.nn.Module.__getattribute__(model, "training")


def values(mod, **params):
    """The returned dict (values as returned: floats, or whatever the student gave)."""
    result, _, _ = _run(mod, **params)
    return result


def run(mod, **params):
    """One call, as observed: what it returned, every forward call's record, the mode after.

    `{"result": …, "calls": [{"first_id", "training", "grad", "loss", "shape"}, …],
    "training_after": bool}`. The facts (batches per split, their mean, grad or mode during
    the call) are the judge's to derive (grader/checks/test_ex11_estimate_loss.py).
    """
    result, log, training = _run(mod, **params)
    return {"result": result, "calls": log, "training_after": training}


def lesson_step0(mod, corpus_path):
    """The lesson's step 0: torch.manual_seed(1337), a fresh bigram model (the recording one),
    then estimate_loss on tiny Shakespeare with the global generator (eval_iters=200, B=32,
    T=8): what it returned, as returned, and every forward call's record (the judge rounds the
    values like the lesson's table and ties them to the losses the model computed)."""
    estimate = attribute(mod, "estimate_loss")
    train, val, vocab_size = lesson_splits(corpus_path)
    splits = {"train": train, "val": val}
    log: list = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            seed_global(1337)
            model = _recorder_class(log)(vocab_size)  # the piece's own draws: the lesson's weights
            with swapped(mod, "estimate_loss", get_batch=piece("get_batch")):
                result = estimate(model, splits, 8, 32, 200)
    finally:
        torch.set_num_threads(threads)
    return {"result": result, "calls": log}
