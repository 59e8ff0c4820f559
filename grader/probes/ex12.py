"""Probes for ex12 (train_bigram).

One training run per subject and setting, cached, observed from the inside. What the
student's file imported from earlier exercises is replaced for the run: `BigramLanguageModel`
by the correct model from `grader.pieces`, `get_batch` / `estimate_loss` by the correct
pieces (a bug in ex08, ex09 or ex11 is not charged again here). What the file itself
defines is graded as written: its own `estimate_loss` runs as it is, and its own model
class is instrumented as it is (a subclass adds the watch). The instrumented model
records, without changing a single number:

- every forward call, as "E" (gradient recording off: an estimate) or "T" (on: a
  training step), run-length encoded in order, with the model's mode at each;
- for every backward, whether the gradient left in `p.grad` after accumulation equals the
  fresh gradient of this backward (a tensor hook sees the fresh one before it is
  accumulated, `register_post_accumulate_grad_hook` sees the sum): any difference means
  the previous step's gradient was not cleared.

Runs use one thread and `torch.random.fork_rng`, so the lesson's table is reproducible
and the process's global generator is left as it was. The data is tiny Shakespeare read
from `corpus_path`, encoded with the sorted character vocabulary, split 90/10.
"""

from __future__ import annotations

import contextlib

import torch

from grader.pieces import imported_from_earlier, piece
from grader.fixtures.corpus import lesson_splits
from grader.probes.common import attribute
from grader.probes.common import swapped

LESSON_STEPS = (0, 300, 600, 900, 2700)
# The short run the structural checks watch (fast; every argument away from its default,
# so a loop that ignores one — AdamW at a hard-coded 1e-2, a fixed 65 — fails a check).
SHORT = {"max_iters": 40, "eval_interval": 10, "eval_iters": 5, "learning_rate": 3e-2, "batch_size": 8,
         "block_size": 6, "seed": 7}
SHORT_EXTRA_VOCAB = 5  # vocab_size = 65 + 5: a table with five ids the text never uses

_cache: dict = {}


def _corpus(corpus_path):
    return lesson_splits(corpus_path)


class _Watch:
    """What the instrumented model saw during one run."""

    def __init__(self, progress=None, total=None):
        self.models = []
        self.events = []  # [[kind, count], ...]
        self.train_forward_in_eval = 0
        self.estimate_forward_in_train = 0
        self.backwards = 0
        self.estimate_losses = []  # the loss tensor of each estimate forward given targets, in order
        self.accumulated = 0
        self.first_accumulated = None
        self.progress = progress if callable(progress) else None
        self.total = total

    def forward(self, model):
        kind = "T" if torch.is_grad_enabled() else "E"
        if self.events and self.events[-1][0] == kind:
            self.events[-1][1] += 1
        else:
            self.events.append([kind, 1])
        if kind == "T" and not model.training:
            self.train_forward_in_eval += 1
        if kind == "E" and model.training:
            self.estimate_forward_in_train += 1

    def accumulated_grad(self, param, fresh):
        self.backwards += 1
        if fresh is None or param.grad is None or not torch.equal(param.grad, fresh):
            self.accumulated += 1
            if self.first_accumulated is None:
                self.first_accumulated = self.backwards - 1
        if self.progress is not None:
            self.progress(self.backwards, self.total)


def _instrumented(watch: _Watch, base):
    class BigramLanguageModel(base):
        def __init__(self, vocab_size):
            super().__init__(vocab_size)  # the same draws as the reference's model
            watch.models.append(self)
            self._fresh = {}
            for name, p in self.named_parameters():
                p.register_hook(self._keep(name))
                p.register_post_accumulate_grad_hook(self._check(name))

        def _keep(self, name):
            def hook(grad):
                self._fresh[name] = grad.detach().clone()
            return hook

        def _check(self, name):
            def hook(param):
                watch.accumulated_grad(param, self._fresh.pop(name, None))
            return hook

        def forward(self, idx, targets=None):
            watch.forward(self)
            out = super().forward(idx, targets)
            loss = out[1] if isinstance(out, tuple) and len(out) == 2 else None
            if targets is not None and not torch.is_grad_enabled() and isinstance(loss, torch.Tensor):
                watch.estimate_losses.append(loss)  # as it came: sent as plain data, read by the judge
            return out

    return BigramLanguageModel


@contextlib.contextmanager
def _watched_model(mod, watch: _Watch):
    """The model class train_bigram will find, instrumented for this run.

    Imported from ex09 (or missing a piece): the correct model, swapped in by `swapped`.
    Written in this file: the student's own class, instrumented as it is."""
    own = vars(mod).get("BigramLanguageModel")
    if own is None or imported_from_earlier(own) or not isinstance(own, type):
        yield _instrumented(watch, piece("BigramLanguageModel"))
        return
    vars(mod)["BigramLanguageModel"] = _instrumented(watch, own)
    try:
        yield None  # already in place; `swapped` leaves a name the file defines alone
    finally:
        vars(mod)["BigramLanguageModel"] = own


def _run(mod, corpus_path, settings: dict, progress=None, extra_vocab: int = 0) -> dict:
    """Run the student's train_bigram once for these settings (cached per subject)."""
    train_bigram = attribute(mod, "train_bigram")
    key = (mod.__name__, id(train_bigram), corpus_path, tuple(sorted(settings.items())), extra_vocab)
    if key in _cache:
        kept = _cache[key][1]
        if isinstance(kept, BaseException):
            raise kept
        return kept
    train_data, val_data, vocab_size = _corpus(corpus_path)
    watch = _Watch(progress, settings.get("max_iters", 3000))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]), _watched_model(mod, watch) as model_class, swapped(
                mod, "train_bigram", **({"BigramLanguageModel": model_class} if model_class else {}),
                get_batch=piece("get_batch"), estimate_loss=piece("estimate_loss")):
            result = train_bigram(train_data, val_data, vocab_size + extra_vocab, **settings)
        model, history = result  # the contract: (model, history)
    except Exception as err:  # one failed run is reported by every check that needs it
        _cache[key] = (train_bigram, err)
        raise
    finally:
        torch.set_num_threads(threads)
    weight = None
    if watch.models and model is watch.models[-1]:
        weight = model.token_embedding_table.weight.detach().clone()  # (V, V)
    # whatever model came back, the one built or a copy of it: the judge computes its losses
    table = getattr(getattr(model, "token_embedding_table", None), "weight", None)
    returned_weight = table.detach().clone() if isinstance(table, torch.Tensor) else None
    out = {
        "returned_weight": returned_weight,
        "estimate_losses": list(watch.estimate_losses),
        "history": history,  # as returned: the judge reads its form and values (grader/checks/test_ex12…)
        "models_built": len(watch.models),
        "returned_built_model": bool(watch.models) and model is watch.models[-1],
        "weight": weight,
        "events": [tuple(e) for e in watch.events],
        "train_forward_in_eval": watch.train_forward_in_eval,
        "estimate_forward_in_train": watch.estimate_forward_in_train,
        "backwards": watch.backwards,
        "accumulated": watch.accumulated,
        "first_accumulated": watch.first_accumulated,
    }
    _cache[key] = (train_bigram, out)  # the function is kept alive so its id is not reused
    return out


def _full(mod, corpus_path, progress=None):
    return _run(mod, corpus_path, {}, progress)  # the defaults: the lesson's run


def _short(mod, corpus_path):
    return _run(mod, corpus_path, dict(SHORT), extra_vocab=SHORT_EXTRA_VOCAB)


# ---- the lesson's run (defaults) ------------------------------------------------------------

def history(mod, corpus_path, progress=None):
    """The full run's history, as train_bigram returned it (the judge rounds, reads the band
    and the steps)."""
    return _full(mod, corpus_path, progress)["history"]


def full_training(mod, corpus_path, progress=None):
    """What the full run did, for the judge to tie the history to it: the returned model's table
    (`token_embedding_table.weight`, the one built or a copy; else None), how many backward
    passes it made, the loss of each estimate forward given targets, in order, and the order
    of forward calls (estimates and training steps). A history no training produced (the
    lesson's table, copied) is told apart."""
    run = _full(mod, corpus_path, progress)
    return {"weight": run["returned_weight"], "backwards": run["backwards"],
            "estimate_losses": run["estimate_losses"], "events": run["events"]}


# ---- the short run (structure) --------------------------------------------------------------

def model_used(mod, corpus_path):
    """How many models train_bigram built with the imported class, and whether it returned it."""
    run = _short(mod, corpus_path)
    return {"models_built": run["models_built"], "returned_built_model": run["returned_built_model"]}


def short_history(mod, corpus_path):
    """The short run's history, as returned (the judge reads its form too)."""
    return _short(mod, corpus_path)["history"]


def gradients(mod, corpus_path):
    """Backward passes, and in how many p.grad held more than this step's fresh gradient."""
    run = _short(mod, corpus_path)
    return {"backwards": run["backwards"], "accumulated": run["accumulated"]}


def modes(mod, corpus_path):
    """Training forwards run in eval mode, and estimate forwards run in train mode."""
    run = _short(mod, corpus_path)
    return {"train_forward_in_eval": run["train_forward_in_eval"],
            "estimate_forward_in_train": run["estimate_forward_in_train"]}


def events(mod, corpus_path):
    """The order of forward calls: ("E", n) estimate forwards, ("T", n) training forwards."""
    return _short(mod, corpus_path)["events"]


def final_weight(mod, corpus_path):
    """The returned model's table after the short run."""
    return _short(mod, corpus_path)["weight"]
