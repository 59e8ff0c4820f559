"""Probes for ex02 (stable_softmax, nll, masked_mean_nll): each calls the function and
returns what it returned.

Which torch functions the answer uses is not watched here: the contract's rule against the
ready-made softmax, log-sum-exp and loss is judged on the judge's own reading of the source
(grader/per_exercise/ex02/checks.py, grader.judge.uses), never on what ran in the worker.
"""

from __future__ import annotations

import torch


def _float_tensor(x):
    return torch.as_tensor(x, dtype=torch.float32).clone()


def softmax(mod, logits):
    """stable_softmax(logits)."""
    return mod.stable_softmax(_float_tensor(logits))


def nll(mod, logits, label, as_tensor=False):
    """nll(logits, label); logits passed as a list, or as a tensor."""
    logits = _float_tensor(logits) if as_tensor else [float(v) for v in logits]
    return mod.nll(logits, label)


def masked(mod, logits, labels, ignore_index=None, grad=True):
    """masked_mean_nll: {"value": 0-dim tensor, "grad": d value / d logits}."""
    x = _float_tensor(logits).requires_grad_(grad)
    labels = torch.as_tensor(labels, dtype=torch.long).clone()
    kwargs = {} if ignore_index is None else {"ignore_index": ignore_index}
    out = mod.masked_mean_nll(x, labels, **kwargs)
    if not isinstance(out, torch.Tensor):
        return {"value": out, "grad": None}
    result = {"value": out.detach()}
    if grad:
        if out.requires_grad and out.numel() == 1:
            out.reshape(()).backward()
            result["grad"] = None if x.grad is None else x.grad.detach()
        else:
            result["grad"] = None  # not differentiable: no graph back to the logits
    return result
