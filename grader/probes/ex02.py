"""Probes for ex02 (stable_softmax, nll, masked_mean_nll), run behind the forbidden-API net.

The contract forbids every API that does the softmax, log-sum-exp or loss for the student.
Every call here runs inside `forbidden_net()`:

- the Python-level APIs (F.cross_entropy, torch.softmax, Tensor.logsumexp, …, the private
  torch._C._nn.cross_entropy_loss, nn.CrossEntropyLoss / nn.NLLLoss forward) are replaced
  by functions that record their name and raise `ForbiddenAPIError`; the originals are put
  back afterwards, whatever happens;
- a TorchDispatchMode watches the aten ops these APIs end in (_softmax, _log_softmax,
  logsumexp, nll_loss_forward, nll_loss2d_forward), and the kernels that do a softmax or a
  log-sum-exp inside something else (attention, masked softmax, logcumsumexp), so an alias
  bound when the student's module was imported (`from torch.nn.functional import
  cross_entropy as ce`) is caught too.

A use is recorded before raising, so a student `try/except` around the call does not hide
it: the probe raises `ForbiddenAPIError` naming the first API used once the call returns.
The error reaches the check as the student's exception (type ForbiddenAPIError, the API in
its message).
"""

from __future__ import annotations

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class ForbiddenAPIError(RuntimeError):
    """A forbidden API was called / 调用了禁止的 API."""


def _message(name: str) -> str:
    return (f"用了禁止的 API：{name}（本练习要自己用 max、exp、sum、log 写出 softmax / log-sum-exp / 交叉熵）"
            f" / forbidden API used: {name} (write the softmax / log-sum-exp / loss yourself "
            f"with max, exp, sum, log)")


# (owner, attribute, the name shown to the student)
def _python_targets():
    import torch.nn.functional as F

    return [
        (F, "cross_entropy", "F.cross_entropy"),
        (F, "nll_loss", "F.nll_loss"),
        (F, "log_softmax", "F.log_softmax"),
        (F, "softmax", "F.softmax"),
        (torch, "log_softmax", "torch.log_softmax"),
        (torch, "softmax", "torch.softmax"),
        (torch, "logsumexp", "torch.logsumexp"),
        (torch.Tensor, "log_softmax", "Tensor.log_softmax"),
        (torch.Tensor, "softmax", "Tensor.softmax"),
        (torch.Tensor, "logsumexp", "Tensor.logsumexp"),
        (torch.special, "softmax", "torch.special.softmax"),
        (torch.special, "log_softmax", "torch.special.log_softmax"),
        (torch.special, "logsumexp", "torch.special.logsumexp"),
        (torch._C._nn, "cross_entropy_loss", "F.cross_entropy（torch._C._nn.cross_entropy_loss）"),
        (torch.nn.CrossEntropyLoss, "forward", "nn.CrossEntropyLoss"),
        (torch.nn.NLLLoss, "forward", "nn.NLLLoss"),
    ]


_ATEN_NAMES = {
    "_softmax": "softmax（F.softmax / torch.softmax / Tensor.softmax 或其别名 / or an alias）",
    "_log_softmax": "log_softmax（F.log_softmax / F.cross_entropy 或其别名 / or an alias）",
    "logsumexp": "logsumexp（torch.logsumexp 或其别名 / or an alias）",
    "nll_loss_forward": "nll_loss（F.nll_loss / F.cross_entropy 或其别名 / or an alias）",
    "nll_loss2d_forward": "nll_loss（F.nll_loss / F.cross_entropy 或其别名 / or an alias）",
    # kernels that do the softmax or log-sum-exp inside something else: torch's attention
    # (F.scaled_dot_product_attention with the logits as keys is a softmax), masked softmaxes,
    # a cumulative log-sum-exp (its last entry is the log-sum-exp)
    "_safe_softmax": "softmax（F.scaled_dot_product_attention 里的 / inside F.scaled_dot_product_attention）",
    "_masked_softmax": "softmax（torch._masked_softmax）",
    "_sparse_softmax": "softmax（torch.sparse.softmax）",
    "_sparse_log_softmax": "log_softmax（torch.sparse.log_softmax）",
    "softmax": "softmax（torch.ops.quantized.softmax 或其别名 / or an alias）",
    "logcumsumexp": "logsumexp（torch.logcumsumexp）",
    "_logcumsumexp": "logsumexp（torch._logcumsumexp）",
    **{name: f"softmax（{name}：注意力内核 / an attention kernel）" for name in (
        "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_fused_attention_overrideable", "_scaled_dot_product_attention_math_for_mps",
        "_flash_attention_forward", "_flash_attention_forward_no_dropout_inplace", "_efficient_attention_forward",
        "_native_multi_head_attention", "_transformer_encoder_layer_fwd")},
}


class _AtenNet(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise __torch_dispatch__ is wrapped to import torch._dynamo on first use,
        # which a fenced worker cannot (and which costs a second).
        return False

    def __init__(self, used: list):
        super().__init__()
        self.used = used

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = getattr(getattr(func, "overloadpacket", None), "__name__", "")
        if name in _ATEN_NAMES:
            self.used.append(_ATEN_NAMES[name])
            raise ForbiddenAPIError(_message(_ATEN_NAMES[name]))
        return func(*args, **(kwargs or {}))


# What takes the aten watch off (pops the mode, or keeps the Python dispatch key out): while
# the net is up, each of these records its use and raises, so the watch cannot be lowered
# around a forbidden call. (An alias bound at import escapes this; the judge's reading of the
# file, grader.judge.scan, fails ex02 for any of these names.)
_WATCH_SWITCHES = {
    "torch._C": ("_pop_torch_dispatch_stack", "_set_dispatch_mode", "_unset_dispatch_mode", "_DisableTorchDispatch",
                 "_ExcludeDispatchKeyGuard", "ExcludeDispatchKeyGuard", "_ForceDispatchKeyGuard",
                 "_SetExcludeDispatchKeyGuard", "_dispatch_tls_set_dispatch_key_excluded",
                 "_dispatch_tls_set_dispatch_key_included"),
    "torch.utils._python_dispatch": ("_pop_mode", "_pop_mode_temporarily", "_disable_current_modes"),
}


def _switch_targets():
    import torch.utils._python_dispatch as python_dispatch

    owners = {"torch._C": torch._C, "torch.utils._python_dispatch": python_dispatch}
    return [(owners[space], name, f"{space}.{name}（关掉评分的监视 / turns off the grader's watch）")
            for space, names in _WATCH_SWITCHES.items() for name in names if hasattr(owners[space], name)]


@contextlib.contextmanager
def _patched(targets, used: list):
    """Replace each (owner, attr, shown) by a function that records `shown` and raises."""
    saved = []
    try:
        for owner, attr, shown in targets:
            had_own = attr in getattr(owner, "__dict__", {})
            original = owner.__dict__[attr] if had_own else getattr(owner, attr)

            def raiser(*args, _shown=shown, **kwargs):
                used.append(_shown)
                raise ForbiddenAPIError(_message(_shown))

            saved.append((owner, attr, had_own, original))
            setattr(owner, attr, raiser)
        yield
    finally:
        for owner, attr, had_own, original in reversed(saved):
            if had_own:
                setattr(owner, attr, original)
            else:
                delattr(owner, attr)


@contextlib.contextmanager
def forbidden_net(used: list):
    """Patch the forbidden Python APIs and watch the aten ops; restore everything after.

    The switches that would take the aten watch off are patched inside the mode (and put back
    before it is left: leaving it pops it)."""
    with _patched(_python_targets(), used), _AtenNet(used), _patched(_switch_targets(), used):
        yield


def _guarded(fn, *args, **kwargs):
    used: list = []
    try:
        with forbidden_net(used):
            result = fn(*args, **kwargs)
    except ForbiddenAPIError:
        raise ForbiddenAPIError(_message(used[0])) from None
    except Exception:
        if used:
            raise ForbiddenAPIError(_message(used[0])) from None
        raise
    if used:
        raise ForbiddenAPIError(_message(used[0]))
    return result


def _float_tensor(x):
    return torch.as_tensor(x, dtype=torch.float32).clone()


def softmax(mod, logits):
    """stable_softmax(logits) behind the net."""
    return _guarded(mod.stable_softmax, _float_tensor(logits))


def nll(mod, logits, label, as_tensor=False):
    """nll(logits, label) behind the net; logits passed as a list, or as a tensor."""
    logits = _float_tensor(logits) if as_tensor else [float(v) for v in logits]
    return _guarded(mod.nll, logits, label)


def masked(mod, logits, labels, ignore_index=None, grad=True):
    """masked_mean_nll behind the net: {"value": 0-dim tensor, "grad": d value / d logits}."""
    x = _float_tensor(logits).requires_grad_(grad)
    labels = torch.as_tensor(labels, dtype=torch.long).clone()
    kwargs = {} if ignore_index is None else {"ignore_index": ignore_index}
    out = _guarded(mod.masked_mean_nll, x, labels, **kwargs)
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


def forbidden_use(mod, seed=0):
    """Each function once on random inputs behind the net: which forbidden API it used, if any,
    and which did not run to the end (raised): the rule is only seen kept by a function that ran.

    `{"used": {"stable_softmax": None, "nll": "F.cross_entropy", "masked_mean_nll": None},
    "unfinished": {"masked_mean_nll": "ValueError"}}`: a wrong value is the other checks'
    business. A stub (NotImplementedError everywhere) stays not implemented.
    """
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(6, 5, generator=g) * 3  # (N, V)
    y = torch.randint(5, (6,), generator=g)  # (N,)
    y[1] = -100
    calls = {
        "stable_softmax": (mod.stable_softmax, (z.clone(),)),
        "nll": (mod.nll, (z[0].clone(), int(y[0]))),
        "masked_mean_nll": (mod.masked_mean_nll, (z.clone().requires_grad_(), y.clone())),
    }
    out, unfinished, stubs = {}, {}, 0
    for name, (fn, args) in calls.items():
        used: list = []
        try:
            with forbidden_net(used):
                fn(*args)
        except NotImplementedError:
            stubs += 1
            unfinished[name] = "NotImplementedError"
        except Exception as err:  # noqa: BLE001 — a wrong function is judged by the other checks
            unfinished[name] = type(err).__name__
        out[name] = used[0] if used else None
    if stubs == len(calls):
        raise NotImplementedError("stable_softmax, nll, masked_mean_nll")
    return {"used": out, "unfinished": unfinished}


