"""Probes for ex12 (train_bigram): training runs, and what each returned, nothing else.

One run per subject, setting and model, cached and shared by the checks that look at it. What
the student's file imported from earlier exercises is replaced for the run (`get_batch` and
`estimate_loss` by the correct pieces of `grader.pieces`: a bug in ex08 or ex11 is not charged
again here); what the file itself defines is graded as written. The model class the run finds
under the name `BigramLanguageModel` is

- "as written": the correct model (grader.pieces) where the file imports it from ex09, the
  file's own class where it writes one;
- otherwise a model of the probe's choosing, whatever the file holds, so that what the run
  returns shows how it trained:
  - "plain": the correct model;
  - "estimate_reveal": the correct model, its loss reading 1 higher in train mode (a constant:
    training is unchanged, an estimate made in train mode is not);
  - "train_reveal": the correct model, its logits rolled by one id in eval mode (a training
    step made in eval mode moves the table elsewhere; estimates are not compared);
  - "bowl": a table pulled towards a fixed target table whatever the batch: the trained table
    shows only the optimizer's steps (how many, at which learning rate, on which gradients);
  - "numbered": grader.fixtures.numbered, whose n-th call has the loss 1 + n/100: each row of
    the history shows which calls its estimate averaged, and how many training calls came
    before it.

Each run returns the history as returned, the returned model's table
(`token_embedding_table.weight`, the one built or a copy; else None), and whether the returned
model is an instance of the class the run handed in. Runs use one thread and
`torch.random.fork_rng`, so the lesson's table is reproducible and the process's global
generator is left as it was. The data is tiny Shakespeare read from `corpus_path`, encoded
with the sorted character vocabulary, split 90/10.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn as nn

from grader.fixtures.corpus import lesson_splits
from grader.fixtures.numbered import Numbered
from grader.pieces import imported_from_earlier, piece
from grader.probes.common import attribute, swapped
from grader.probes.seeding import seed_global

LESSON_STEPS = (0, 300, 600, 900, 2700)
# The short runs (fast; every argument away from its default, so a loop that ignores one —
# AdamW at a hard-coded 1e-2, a fixed 65 — fails a check).
SHORT = {"max_iters": 40, "eval_interval": 10, "eval_iters": 5, "learning_rate": 3e-2, "batch_size": 8,
         "block_size": 6, "seed": 7}
SHORT_EXTRA_VOCAB = 5  # vocab_size = 65 + 5: a table with five ids the text never uses
# The lesson's run at learning rate 0: the model never moves, so every row is an estimate of
# the model it returns (eval_iters=200: each row within about 0.01 of the whole splits' loss).
FROZEN = {"max_iters": 2, "eval_interval": 1, "learning_rate": 0.0}
KINDS = ("as_written", "plain", "estimate_reveal", "train_reveal", "bowl", "numbered")

_cache: dict = {}


def _estimate_reveal(base):
    class EstimateReveal(base):
        """The correct bigram, its loss 1 higher in train mode (its gradient unchanged)."""

        def forward(self, idx, targets=None):
            logits, loss = super().forward(idx, targets)
            return logits, (loss + 1.0 if loss is not None and self.training else loss)

    return EstimateReveal


def _train_reveal(base):
    class TrainReveal(base):
        """The correct bigram in train mode; in eval mode its logits rolled by one id."""

        def __init__(self, vocab_size):
            super().__init__(vocab_size)
            table = self.token_embedding_table
            table.register_forward_hook(lambda _t, _i, out: out if self.training else out.roll(1, dims=-1))

    return TrainReveal


class _Bowl(nn.Module):
    """A table pulled towards a fixed target table, whatever the batch: its loss is their mean
    squared distance. Both tables come from a generator of its own (the global one untouched)."""

    def __init__(self, vocab_size):
        super().__init__()
        g = torch.Generator().manual_seed(1000 + vocab_size)
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size, _weight=torch.randn(vocab_size, vocab_size, generator=g))
        self.register_buffer("target", torch.randn(vocab_size, vocab_size, generator=g))  # (V, V)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table.weight[idx]  # (B, T, V): each id's row of the table
        if targets is None:
            return logits, None
        return logits, ((self.token_embedding_table.weight - self.target) ** 2).mean()


def _handed_class(kind: str):
    """The class a forced run hands to train_bigram under the name BigramLanguageModel."""
    if kind == "bowl":
        return _Bowl
    if kind == "numbered":
        return Numbered
    base = piece("BigramLanguageModel")
    return {"plain": base, "estimate_reveal": _estimate_reveal(base), "train_reveal": _train_reveal(base)}[kind]


def _with_progress(base, progress, total):
    """`base`, reporting each training forward (gradients on) to the progress bar, for display."""
    done = [0]

    class BigramLanguageModel(base):
        def forward(self, idx, targets=None):
            if torch.is_grad_enabled():
                done[0] += 1
                progress(done[0], total)
            return super().forward(idx, targets)

    return BigramLanguageModel


@contextlib.contextmanager
def _model_class(mod, kind: str, progress, total):
    """Put this run's model class under the name BigramLanguageModel for the call; yields it.

    "as_written": the correct model where the file imports it from ex09 (or lacks it), the
    file's own class where it writes one. Any other kind: the probe's class, in place of
    whatever the file holds (a known mistake's override finds it in its own globals too). With
    `progress`, a subclass that reports the training forwards to the progress bar is put there."""
    own = vars(mod).get("BigramLanguageModel")
    if kind == "as_written" and (own is None or imported_from_earlier(own) or not isinstance(own, type)):
        handed = piece("BigramLanguageModel")
    elif kind == "as_written":
        handed = own
    else:
        handed = _handed_class(kind)
    shown = _with_progress(handed, progress, total) if callable(progress) else handed
    spaces = [vars(mod)]
    fn = vars(mod).get("train_bigram")
    own_globals = getattr(fn, "__globals__", None)
    if isinstance(own_globals, dict) and own_globals is not vars(mod):  # a known mistake's override
        spaces.append(own_globals)
    saved = [(space, space.get("BigramLanguageModel")) for space in spaces]
    for space in spaces:
        space["BigramLanguageModel"] = shown
    try:
        yield handed
    finally:
        for space, old in saved:
            if old is None:
                space.pop("BigramLanguageModel", None)
            else:
                space["BigramLanguageModel"] = old


def _run(mod, corpus_path, settings: dict, kind: str = "as_written", progress=None, extra_vocab: int = 0) -> dict:
    """Run the student's train_bigram once for these settings and this model (cached per subject)."""
    train_bigram = attribute(mod, "train_bigram")
    key = (mod.__name__, id(train_bigram), corpus_path, tuple(sorted(settings.items())), extra_vocab, kind)
    if key in _cache:
        kept = _cache[key][1]
        if isinstance(kept, BaseException):
            raise kept
        return kept
    train_data, val_data, vocab_size = lesson_splits(corpus_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]), _model_class(mod, kind, progress, settings.get("max_iters", 3000)) \
                as handed, swapped(mod, "train_bigram", get_batch=piece("get_batch"), estimate_loss=piece("estimate_loss")):
            result = train_bigram(train_data, val_data, vocab_size + extra_vocab, **settings)
        model, history = result  # the contract: (model, history)
    except Exception as err:  # one failed run is reported by every check that needs it
        _cache[key] = (train_bigram, err)
        raise
    finally:
        torch.set_num_threads(threads)
    table = getattr(getattr(model, "token_embedding_table", None), "weight", None)
    out = {
        "history": history,  # as returned: the judge reads its form and values (grader/per_exercise/ex12/checks.py)
        "weight": table.detach().clone() if isinstance(table, torch.Tensor) else None,  # (V, V)
        "handed_model": isinstance(model, handed),
    }
    _cache[key] = (train_bigram, out)  # the function is kept alive so its id is not reused
    return out


def _short(mod, corpus_path, kind="as_written"):
    return _run(mod, corpus_path, dict(SHORT), kind, extra_vocab=SHORT_EXTRA_VOCAB)


# ---- the lesson's run (defaults) ------------------------------------------------------------

def history(mod, corpus_path, progress=None):
    """The lesson's run (the defaults): its history, as train_bigram returned it (the judge
    rounds, reads the band and the steps)."""
    return _run(mod, corpus_path, {}, progress=progress)["history"]


def full_training(mod, corpus_path, progress=None):
    """The lesson's run: the returned model's table (the one built or a copy; else None). The
    judge computes what it predicts and its losses over the whole splits."""
    return {"weight": _run(mod, corpus_path, {}, progress=progress)["weight"]}


def frozen_training(mod, corpus_path):
    """The lesson's run at learning rate 0 for two steps: its history and the returned model's table."""
    run = _run(mod, corpus_path, dict(FROZEN))
    return {"history": run["history"], "weight": run["weight"]}


# ---- the short runs -------------------------------------------------------------------------

def short_history(mod, corpus_path):
    """The short run's history, as returned (the judge reads its form too)."""
    return _short(mod, corpus_path)["history"]


def final_weight(mod, corpus_path):
    """The returned model's table after the short run."""
    return _short(mod, corpus_path)["weight"]


def handed(mod, corpus_path, kinds=("plain",)):
    """The short run once per model kind the probe hands in: {kind: {"history", "weight",
    "handed_model"}}, and the table a model of the handed class starts from when built right
    after `torch.manual_seed(seed)` ("untrained", built here, outside the student's code)."""
    out = {kind: _short(mod, corpus_path, kind) for kind in kinds}
    with torch.random.fork_rng(devices=[]):
        seed_global(SHORT["seed"])
        _, _, vocab_size = lesson_splits(corpus_path)
        start = piece("BigramLanguageModel")(vocab_size + SHORT_EXTRA_VOCAB)
    out["untrained"] = start.token_embedding_table.weight.detach().clone()  # (V, V)
    return out
