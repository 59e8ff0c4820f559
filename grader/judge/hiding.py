"""What a hidden check may show a student: pass or fail, the shapes, the diagnosis.

A hidden check's inputs are the submission's to see only while it runs: with resubmissions
(Gradescope, CI on every push) anything a report echoes back can be harvested and replayed.
So the student's view of a failed hidden check is computed here, in the judge, from the
two observations, in words the judge chose:

- the expected side as its *shape* (`T(4, 8, 65)`, `float`, `{'loss': float, 'grad': T(2, 4, 32)}`,
  `raises ValueError`), never a value;
- the student's side as its shape too, but a number in it that is not a dimension of the
  expected shape (or a product of two) is left out (`list of int`, `T(2 dims)`), and dict keys
  that are not the expected keys are only counted (`{'a': int, 2 other keys}`): a submission
  cannot spell the hidden inputs into the shape of what it returns;
- which part differs: the expected dict's keys and tuple's positions that differ, each with
  what differs in a word (its value, type, length, shape), never a value;
- an exception by its type when the type is a built-in one (a submission can name its own
  exception class after the inputs), never its message, its traceback or what was printed.

    >>> import torch
    >>> hidden_view(Observation(ok=True, value=torch.zeros(4, 8)), Observation(ok=True, value=torch.zeros(8, 4)))
    {'expected': 'T(4, 8)', 'got': 'T(8, 4)', 'zh': '形状不同', 'en': 'the shape differs'}
    >>> hidden_view(Observation(ok=True, value=2.5), Observation(ok=True, value=torch.zeros(511)))['got']
    'T(1 dim)'
    >>> hidden_view(Observation(ok=True, value={"same_parameter": True, "std": "ok", "n": 3}),
    ...             Observation(ok=True, value={"same_parameter": False, "std": "low", "n": 3}))['en']
    'these parts differ: `same_parameter` (its value), `std` (its value)'
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from pathlib import Path

from grader.judge.compare import DEFAULT_TOL, Mismatch, Tol, differences
from grader.model.calls import Observation

# Exception names a student's view may show: Python's own (a class the submission defines
# could carry any name), and the grader's own reports of a stub or a missing file.
SAFE_ERRORS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
) | {"NotImplementedYet", "MissingSubmissionFile", "MissingName", "Timeout", "WorkerDied"}
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
    """The shape of a value, no values in it. With `allowed`, a length or a dimension not in it
    is left out (`list of int`, `T(2 dims)`); with `keys`, dict keys not in it are only
    counted (the student's side)."""
    import torch

    def known(x: int) -> bool:
        return allowed is None or x in allowed

    if depth > MAX_DEPTH:
        return "…"
    if isinstance(value, torch.Tensor):
        if not all(known(int(d)) for d in value.shape):
            return f"T({value.dim()} dim{'' if value.dim() == 1 else 's'})"
        dims = [str(int(d)) for d in value.shape][:6]
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
        head = f"{kind}[{len(value)}]" if known(len(value)) else kind
        items = [shape_of(v, allowed, keys, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if items and all(i == items[0] for i in items):
            return f"{head} of {items[0]}"
        if not known(len(value)):
            return head + (" of mixed items" if items else "")
        return head + (" (" + ", ".join(items) + (", …" if len(value) > MAX_ITEMS else "") + ")" if items else "")
    if isinstance(value, dict):
        parts, others = [], 0
        for k, v in value.items():
            if not (isinstance(k, str) and len(k) <= 24 and (keys is None or k in keys)):
                others += 1
            elif len(parts) < MAX_ITEMS:
                parts.append(f"{k!r}: {shape_of(v, allowed, keys, depth + 1)}")
        shown = len(parts) + others
        if others:
            parts.append(f"{others} other key{'' if others == 1 else 's'}")
        return "{" + ", ".join(parts) + (", …" if len(value) > shown else "") + "}"
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


# What differs in a part, in words (grader.judge.compare's `Mismatch.what`): never its value.
WHAT = {"value": ("值", "its value"), "type": ("类型", "its type"), "length": ("项数", "its number of items"),
        "shape": ("形状", "its shape"), "dtype": ("dtype", "its dtype"), "keys": ("键", "its keys")}
WHOLE = {"value": ("形状对，值不对", "the right shape, wrong values"), "type": ("类型不同", "the type differs"),
         "length": ("项数不同", "the number of items differs"), "shape": ("形状不同", "the shape differs"),
         "dtype": ("dtype 不同", "the dtype differs"), "keys": ("键不同", "the keys differ")}


def parts_text(expected, got, tol: Tol = DEFAULT_TOL, words: dict | None = None) -> tuple[str, str]:
    """Which parts of a hidden answer differ, in words: the expected dict's keys and tuple's
    positions (the kit's own names), and what differs in each, with the check's own words
    for it (`words`, fixed text); a value never.

    >>> parts_text([1, 2], [1, 2, 3])
    ('项数不同', 'the number of items differs')
    >>> import torch
    >>> parts_text((torch.zeros(2), torch.zeros(2)), (torch.zeros(2), torch.ones(2)))
    ('这一部分不同：`[1]`（值）', 'this part differs: `[1]` (its value)')
    """
    found = differences(expected, got, tol, True, "")
    if not found:
        return WHOLE["value"]
    if len(found) == 1 and not found[0][0]:
        return WHOLE[found[0][1].what]
    found = _top_parts(found)
    words = words or {}
    zh = "、".join(f"`{where}`（{WHAT[m.what][0]}{'：' + words[where][0] if where in words else ''}）"
                  for where, m in found[:MAX_ITEMS])
    en = ", ".join(f"`{where}` ({WHAT[m.what][1]}{': ' + words[where][1] if where in words else ''})"
                   for where, m in found[:MAX_ITEMS])
    if len(found) > MAX_ITEMS:
        zh, en = zh + f" 等 {len(found)} 处", en + f" and {len(found) - MAX_ITEMS} more"
    if len(found) == 1:
        return f"这一部分不同：{zh}", f"this part differs: {en}"
    return f"这些部分不同：{zh}", f"these parts differ: {en}"


def _top_parts(found: list) -> list:
    """The differing parts by their top-level key or position (`stoi`, not `stoi.e`, `stoi.h`):
    the part that failed, once; what differs in it when all its differences agree, else its value."""
    merged: dict[str, list[str]] = {}
    for where, m in found:
        merged.setdefault(re.match(r"[^.\[]+|\[[^\]]*\]", where).group(0), []).append(m.what)
    return [(top, Mismatch("", "", whats[0] if len(set(whats)) == 1 else "value")) for top, whats in merged.items()]


def hidden_view(expected: Observation | None, got: Observation, tol: Tol = DEFAULT_TOL,
                words: dict | None = None) -> dict:
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
    elif expected is not None:
        zh, en = parts_text(expected.value, got.value, tol, words)
        if want == have and isinstance(expected.value, dict):  # the keys that differ say it: no twice-told shape
            want = have = None
    else:
        zh, en = "值不对", "wrong values"
    return {"expected": want, "got": have, "zh": zh, "en": en}


@functools.lru_cache(maxsize=64)
def contract_names(stub: Path) -> dict[str, str]:
    """The functions the student writes (the stub's, and its classes' methods: a class's
    `__init__` under the class's name), by the name their frames carry.

    A hidden check names the function that raised only when it is one of these: a frame's
    name is the submission's to choose (code it generates could carry a hidden input in it).
    """
    try:
        tree = ast.parse(Path(stub).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            names[node.name] = node.name
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    names["__init__"] = node.name
                elif isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    names[item.name] = item.name
    return names


def hidden_view_of(view, finding, names: dict[str, str] | None = None) -> dict | None:
    """The student's view of a failed hidden check, from the last call it made (the one that
    failed); None for a finding that is not about a call's answer (a custom check's own words,
    the data, the grader, a file or name that is not there): the report then says only that it
    failed, or the judge's own words."""
    if finding.kind in ("custom", "data", "grader_error", "missing") or view is None or not getattr(view, "seen", None):
        return None
    last = getattr(view, "failing", None) or view.seen[-1]  # the check went on past the failed call
    shown = hidden_view(last.expected, last.got, last.tol, getattr(last, "words", None))
    if names is not None:
        shown["label"] = hidden_label(finding, names)
    return shown


def hidden_label(finding, names: dict[str, str]) -> str:
    """A hidden check's label: the stub's function that raised (encode, when a round trip's
    encode raised), else the one its label calls, else none (a probe's own name is the kit's).

    >>> hidden_label(type("F", (), {"raised_in": "", "label": "masked(tensor(…), 3)"}), {"masked_mean_nll": "masked_mean_nll"})
    ''
    """
    raised_in = names.get(getattr(finding, "raised_in", ""))
    if raised_in:
        return f"{raised_in}(…)"
    called = re.match(r"\s*([A-Za-z_]\w*)\(", getattr(finding, "label", "") or "")
    return f"{called.group(1)}(…)" if called and called.group(1) in names.values() else ""
