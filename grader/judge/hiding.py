"""What a hidden check may show a student: pass or fail, the shapes, the diagnosis.

A hidden check's inputs are the submission's to see only while it runs: with resubmissions
(Gradescope, CI on every push) anything a report echoes back can be harvested and replayed.
So the student's view of a failed hidden check is computed here, in the judge, from the
two observations, in words the judge chose:

- the expected side as its *shape* (`T(4, 8, 65)`, `float`, `{'loss': float, 'grad': T(2, 4, 32)}`,
  `raises ValueError`), never a value;
- the student's side as its shape too, but every number in it that is not a dimension of
  the expected shape (or a product of two) is shown as `?`, and dict keys that are not the
  expected keys as `?`: a submission cannot spell the hidden inputs into the shape of what
  it returns;
- an exception by its type when the type is a built-in one (a submission can name its own
  exception class after the inputs), never its message, its traceback or what was printed.

    >>> hidden_view(Observation(ok=True, value=torch.zeros(4, 8)), Observation(ok=True, value=torch.zeros(8, 4)))
    {'expected': 'T(4, 8)', 'got': 'T(8, 4)', 'zh': '形状或类型不同', 'en': 'the shape or type differs'}
    >>> hidden_view(Observation(ok=True, value=2.5), Observation(ok=True, value=torch.zeros(511)))['got']
    'T(?)'
"""

from __future__ import annotations

import builtins

from grader.model.calls import Observation

# Exception names a student's view may show: Python's own (a class the submission defines
# could carry any name), and the grader's own reports of a stub or a missing file.
SAFE_ERRORS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
) | {"NotImplementedYet", "MissingSubmissionFile", "MissingName", "ForbiddenAPIError", "Timeout", "WorkerDied"}
MAX_DEPTH = 3
MAX_ITEMS = 6


ENDED = ("WorkerDied", "MalformedAnswer")  # the worker ended, or answered what no worker of ours sends


def safe_error_name(name: str | None) -> str:
    """`ValueError` -> `ValueError`; a class the submission made up -> `Exception`."""
    return name if name in SAFE_ERRORS else "Exception"


def dims_of(value, depth: int = 0) -> set[int]:
    """Every dimension and length in a value, and the products of two (B*T)."""
    found: set[int] = set()
    import torch

    if depth > MAX_DEPTH:
        return found
    if isinstance(value, torch.Tensor):
        found |= {int(d) for d in value.shape}
    elif isinstance(value, (list, tuple)):
        found.add(len(value))
        for item in list(value)[:MAX_ITEMS]:
            found |= dims_of(item, depth + 1)
    elif isinstance(value, dict):
        found.add(len(value))
        for item in list(value.values())[:MAX_ITEMS]:
            found |= dims_of(item, depth + 1)
    if depth == 0:
        found |= {a * b for a in found for b in found}
    return found


def shape_of(value, allowed: set[int] | None = None, keys: set[str] | None = None, depth: int = 0) -> str:
    """The shape of a value, no values in it. With `allowed`, a number not in it shows as `?`;
    with `keys`, a dict key not in it shows as `?` (the student's side)."""
    import torch

    def n(x: int) -> str:
        return str(x) if allowed is None or x in allowed else "?"

    if depth > MAX_DEPTH:
        return "…"
    if isinstance(value, torch.Tensor):
        dims = [n(int(d)) for d in value.shape][:6]
        return "T(" + ", ".join(dims) + ("…" if value.dim() > 6 else "") + ")"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        items = [shape_of(v, allowed, keys, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if items and all(i == items[0] for i in items):
            return f"{kind}[{n(len(value))}] of {items[0]}"
        return f"{kind}[{n(len(value))}]" + (" (" + ", ".join(items) + (", …" if len(value) > MAX_ITEMS else "") + ")"
                                              if items else "")
    if isinstance(value, dict):
        parts = []
        for k, v in list(value.items())[:MAX_ITEMS]:
            name = repr(k) if isinstance(k, str) and len(k) <= 24 and (keys is None or k in keys) else "?"
            parts.append(f"{name}: {shape_of(v, allowed, keys, depth + 1)}")
        return "{" + ", ".join(parts) + (", …" if len(value) > MAX_ITEMS else "") + "}"
    return "other"


def _keys_of(value, depth: int = 0) -> set[str]:
    if depth > MAX_DEPTH:
        return set()
    if isinstance(value, dict):
        out = {k for k in value if isinstance(k, str)}
        for v in list(value.values())[:MAX_ITEMS]:
            out |= _keys_of(v, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return set().union(*(_keys_of(v, depth + 1) for v in list(value)[:MAX_ITEMS])) if value else set()
    return set()


def hidden_view(expected: Observation | None, got: Observation) -> dict:
    """The student's view of a failed hidden check: `expected`, `got` (shapes) and why (zh, en)."""
    if expected is None:
        want, allowed, keys = None, set(), set()
    elif expected.ok:
        want, allowed, keys = shape_of(expected.value), dims_of(expected.value), _keys_of(expected.value)
    else:
        want, allowed, keys = f"raises {safe_error_name(expected.error_type)}", set(), set()
    if got.ok:
        have = shape_of(got.value, allowed, keys)
    else:
        have = f"raises {safe_error_name(got.error_type)}"
    if not got.ok and got.error_type in ENDED:  # the grader's words, not "your code raised WorkerDied"
        # (no exit status or signal: a submission could spell a hidden input in one)
        return {"expected": want, "got": "—", "zh": "运行你的代码的进程意外结束（隐藏测试：细节不显示）",
                "en": "the process running your code ended unexpectedly (a hidden test: the details are not shown)"}
    if expected is not None and not expected.ok:
        zh, en = ((f"应当抛出 {safe_error_name(expected.error_type)}", f"should raise {safe_error_name(expected.error_type)}")
                  if got.ok else ("抛出的异常不对", "raised the wrong exception"))
    elif not got.ok:
        name = safe_error_name(got.error_type)
        zh, en = f"你的代码抛出了 {name}", f"your code raised {name}"
    elif want is not None and want != have:
        zh, en = "形状或类型不同", "the shape or type differs"
    else:
        zh, en = "形状对，值不对", "the right shape, wrong values"
    return {"expected": want, "got": have, "zh": zh, "en": en}


def hidden_view_of(view, finding) -> dict | None:
    """The student's view of a failed hidden check, from the last call it made (the one that
    failed); None for a finding that is not about a call's answer (a custom check's own words,
    the data, the grader, a file or name that is not there): the report then says only that it
    failed, or the judge's own words."""
    if finding.kind in ("custom", "data", "grader_error", "missing") or view is None or not getattr(view, "seen", None):
        return None
    last = getattr(view, "failing", None) or view.seen[-1]  # the check went on past the failed call
    return hidden_view(last.expected, last.got)
