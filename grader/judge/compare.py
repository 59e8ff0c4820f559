"""Compare plain observations: shapes first, then dtype, then values.

Everything here works on plain data decoded by `wire.decode`; nothing the student wrote
runs. A mismatch is described for people: a short form of each side for the one-line
report (`(2, 4)` for a tensor, the value for a number) and a detail line saying where
they differ first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from grader.judge.sealed import Sealed
from grader.report.humanize import number_in_value as _fmt_number
from grader.report.humanize import short  # noqa: F401  (the checks' vocabulary: grader.judge.compare.short)


@dataclass(frozen=True)
class Tol:
    """Tolerance for floating-point values: |got - expected| <= atol + rtol * |expected|."""

    rtol: float = 1e-4
    atol: float = 1e-5


DEFAULT_TOL = Tol()


@dataclass(frozen=True)
class Mismatch:
    """Why two values differ, in both languages."""

    zh: str
    en: str
    what: str = "value"  # value | type | length | shape | dtype | keys: what differs, in a word


def kind(value) -> str:
    if isinstance(value, torch.Tensor):
        return "0-dim Tensor" if value.dim() == 0 else "Tensor"
    if isinstance(value, dict) and "__unsupported__" in value and len(value) == 1:
        return str(value["__unsupported__"])
    return type(value).__name__


MAX_PARTS = 6  # differing keys or positions listed one by one; past it, "… and N more"


def compare(expected, got, tol: Tol | None = None, *, dtype: bool = True, path: str = "",
            words: dict | None = None) -> Mismatch | None:
    """None when `got` matches `expected`, else a Mismatch saying where.

    A dict (or a tuple) of facts lists EVERY key (position) that differs, each with expected
    against got, and after it the check's own words for that key (`words`: key path -> (zh, en)):

    >>> print(compare({"same_parameter": True, "std": "ok"}, {"same_parameter": False, "std": "ok"},
    ...               words={"same_parameter": ("Parameter 被换掉了", "the Parameter was replaced")}).en)
    `same_parameter`: expected True, got False — the Parameter was replaced
    >>> print(compare({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 5, "c": 4}).en)
    2 parts differ:
    `b`: expected 2, got 5
    `c`: expected 3, got 4
    """
    tol = tol or DEFAULT_TOL
    found = differences(expected, got, tol, dtype, path)
    if not found:
        return None
    lines = [_part_line(where, m, words) for where, m in found[:MAX_PARTS]]
    more_zh = [f"… 另有 {len(found) - MAX_PARTS} 处"] if len(found) > MAX_PARTS else []
    more_en = [f"… and {len(found) - MAX_PARTS} more"] if len(found) > MAX_PARTS else []
    if len(found) == 1:
        return Mismatch(lines[0][0], lines[0][1], found[0][1].what)
    return Mismatch("\n".join([f"{len(found)} 处不同："] + [zh for zh, _ in lines] + more_zh),
                    "\n".join([f"{len(found)} parts differ:"] + [en for _, en in lines] + more_en))


_PREFIXES = (("值不同：", "value differs: "),)


def _part_line(where: str, m: Mismatch, words: dict | None) -> tuple[str, str]:
    """`key`: expected X, got Y — the check's words for that key."""
    zh, en = m.zh, m.en
    for p_zh, p_en in _PREFIXES:  # "value differs" says nothing a listed key does not
        zh, en = zh.removeprefix(p_zh), en.removeprefix(p_en)
    said = (words or {}).get(where)
    if said:
        zh, en = f"{zh}——{said[0]}", f"{en} — {said[1]}"
    return (f"`{where}`：{zh}", f"`{where}`: {en}") if where else (zh, en)


def part_path(path: str, key) -> str:
    """`same_parameter`, `shapes[0]`, `stats.std`: a key or position as a reader names it."""
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{short(key)}]"


def differences(expected, got, tol: Tol, dtype: bool, path: str) -> list[tuple[str, Mismatch]]:
    """Every differing key of a dict and position of a tuple (recursively), each with the first
    difference under it; a list or a tensor is one part (its first difference)."""
    if isinstance(expected, dict) and isinstance(got, dict) and not _unsupported(got):
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing or extra:
            return [(path, _keys_mismatch(missing, extra))]
        found = []
        for key in expected:
            found += differences(expected[key], got[key], tol, dtype, part_path(path, key))
        return found
    if (type(expected) is tuple and type(got) is tuple and len(expected) == len(got)
            and not _is_id_pair(expected)):
        found = []
        for i, (e, g) in enumerate(zip(expected, got)):
            found += differences(e, g, tol, dtype, f"{path}[{i}]")
        return found
    m = _compare(expected, got, tol, dtype, "")  # said relative to the part: `key`: …
    return [] if m is None else [(path, m)]


def _is_id_pair(value) -> bool:
    """A merge's pair `(97, 98)`: one item, not two facts."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _unsupported(value) -> bool:
    return "__unsupported__" in value and len(value) == 1


def _keys_mismatch(missing, extra) -> Mismatch:
    missing, extra = short(missing), short(extra)
    return Mismatch(f"键不同：缺少 {missing}，多出 {extra}", f"keys differ: missing {missing}, unexpected {extra}", "keys")


def _compare(expected, got, tol: Tol, dtype: bool, path: str) -> Mismatch | None:
    """The first difference of one part (a dict or a tuple that did not match in kind included)."""
    where = f" {path}" if path else ""
    if isinstance(expected, Sealed) or isinstance(got, Sealed):  # a hand answer in a student release
        sealed, other = (expected, got) if isinstance(expected, Sealed) else (got, expected)
        if sealed.matches(other, atol=tol.atol, rtol=tol.rtol):
            return None
        return Mismatch(f"值不对{where}（正确的值不显示）", f"not the right value{where} (the right value is not shown)")
    if isinstance(expected, torch.Tensor):
        return _compare_tensor(expected, got, tol, dtype, where)
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        if type(got) is type(expected) and got == expected:
            return None
        return Mismatch(f"值不同{where}：期望 {short(expected)}，得到 {short(got)}",
                        f"value differs{where}: expected {short(expected)}, got {short(got)}")
    if isinstance(expected, (int, float)):
        return _compare_number(expected, got, tol, where)
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected):  # the contract pins list or tuple: a tuple is not a list
            return _kind_mismatch(expected, got, where)
        if len(got) != len(expected):
            return Mismatch(f"长度不同{where}：期望 {len(expected)}，得到 {len(got)}",
                            f"length differs{where}: expected {len(expected)}, got {len(got)}", "length")
        for i, (e, g) in enumerate(zip(expected, got)):
            found = compare(e, g, tol, dtype=dtype, path=f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return _kind_mismatch(expected, got, where)
        found = differences(expected, got, tol, dtype, path)
        return found[0][1] if found else None
    return None if expected == got else Mismatch(f"值不同{where}", f"value differs{where}")


def how_to_get(expected, got) -> tuple[str, str]:
    """How to turn what came back into the type the contract states, or ("", "").

    >>> how_to_get(2.44, torch.tensor(2.44))
    ('（用 .item() 得到 Python 数）', ' (use .item() for a Python number)')
    >>> how_to_get([1, 2], (1, 2))
    ('（用 list(...)）', ' (use list(...))')
    """
    want, have = kind(expected), kind(got)
    if isinstance(got, torch.Tensor) and got.dim() == 0 and isinstance(expected, (int, float)):
        return "（用 .item() 得到 Python 数）", " (use .item() for a Python number)"
    if isinstance(got, torch.Tensor) and isinstance(expected, (list, tuple)):
        return ("（用 .tolist()）", " (use .tolist())") if want == "list" else ("（用 tuple(...)）", " (use tuple(...))")
    if want in ("list", "tuple") and have in ("list", "tuple"):
        return f"（用 {want}(...)）", f" (use {want}(...))"
    if want == "int" and have not in ("list", "tuple", "dict", "str", "NoneType"):
        return "（用 int(...)）", " (use int(...))"
    if want == "float" and have not in ("list", "tuple", "dict", "str", "NoneType"):
        return "（用 float(...)）", " (use float(...))"
    return "", ""


def _kind_mismatch(expected, got, where: str) -> Mismatch:
    zh_hint, en_hint = how_to_get(expected, got)
    return Mismatch(f"类型不同{where}：期望 {kind(expected)}，得到 {kind(got)}{zh_hint}",
                    f"type differs{where}: expected {kind(expected)}, got {kind(got)}{en_hint}", "type")


def _compare_number(expected, got, tol: Tol, where: str) -> Mismatch | None:
    # A 0-dim tensor where the contract says "a number" is not a number (docs/EXERCISES.md
    # pins the types): it fails with the way to get one (.item()).
    if isinstance(expected, int):
        if type(got) is int and got == expected:
            return None
        if type(got) is not int:
            return _kind_mismatch(expected, got, where) if not isinstance(got, float) or got != expected else \
                Mismatch(f"类型不同{where}：期望 int，得到 float {got}（用 int(...)）",
                         f"type differs{where}: expected int, got float {got} (use int(...))", "type")
        return Mismatch(f"值不同{where}：期望 {short(expected)}，得到 {short(got)}",
                        f"value differs{where}: expected {short(expected)}, got {short(got)}")
    if type(got) not in (int, float):  # an int where a float is asked is still the number
        return _kind_mismatch(expected, got, where)
    if type(got) is int and abs(got) > 2**1023:  # beyond every float: no float of it to compare
        return Mismatch(f"值不同{where}：期望 {short(expected)}，得到 {short(got)}",
                        f"value differs{where}: expected {short(expected)}, got {short(got)}")
    if math.isnan(expected) and math.isnan(got):
        return None
    if math.isinf(expected) or math.isinf(got):
        return None if expected == got else Mismatch(f"值不同{where}：期望 {short(expected)}，得到 {short(got)}",
                                                      f"value differs{where}: expected {short(expected)}, got {short(got)}")
    if abs(got - expected) <= tol.atol + tol.rtol * abs(expected):
        return None
    return Mismatch(f"值不同{where}：期望 {short(expected)}，得到 {short(got)}（差 {abs(got - expected):.3g}）",
                    f"value differs{where}: expected {short(expected)}, got {short(got)} (off by {abs(got - expected):.3g})")


def _compare_tensor(expected: torch.Tensor, got, tol: Tol, check_dtype: bool, where: str) -> Mismatch | None:
    if not isinstance(got, torch.Tensor):
        return _kind_mismatch(expected, got, where)
    if tuple(got.shape) != tuple(expected.shape):
        return Mismatch(f"形状不同{where}：期望 {tuple(expected.shape)}，得到 {tuple(got.shape)}",
                        f"shape differs{where}: expected {tuple(expected.shape)}, got {tuple(got.shape)}", "shape")
    if check_dtype and got.dtype != expected.dtype:
        return Mismatch(f"dtype 不同{where}：期望 {expected.dtype}，得到 {got.dtype}",
                        f"dtype differs{where}: expected {expected.dtype}, got {got.dtype}", "dtype")
    if expected.numel() == 0:
        return None
    if expected.dim() == 0:  # a scalar tensor (a loss): compare it as a number
        if expected.dtype == torch.bool:
            return None if bool(expected) == bool(got) else Mismatch(
                f"值不同{where}：期望 {bool(expected)}，得到 {bool(got)}", f"value differs{where}: expected {bool(expected)}, got {bool(got)}")
        return _compare_number(expected.item(), got.item(), tol, where)
    if expected.is_floating_point() or got.is_floating_point():
        e, g = expected.double(), got.double()
        both_nan = torch.isnan(e) & torch.isnan(g)
        close = (g - e).abs() <= tol.atol + tol.rtol * e.abs()
        close = close | both_nan | ((e == g) & torch.isinf(e))
    else:
        close = expected == got
    if bool(close.all()):
        return None
    bad = (~close).nonzero()[0].tolist()
    index = tuple(bad)
    e_val, g_val = expected[index].item(), got[index].item()
    n_bad = int((~close).sum())
    if expected.is_floating_point() or got.is_floating_point():
        diff = (expected.double() - got.double()).abs()
        worst = float(torch.nan_to_num(diff, nan=float("inf")).max())
        return Mismatch(
            f"数值不同{where}：{n_bad}/{expected.numel()} 个元素不等，最大差 {worst:.3g}；首个不同位置 {index}：期望 {_fmt_number(e_val)}，得到 {_fmt_number(g_val)}",
            f"values differ{where}: {n_bad}/{expected.numel()} elements, largest difference {worst:.3g}; first at {index}: expected {_fmt_number(e_val)}, got {_fmt_number(g_val)}")
    return Mismatch(
        f"数值不同{where}：{n_bad}/{expected.numel()} 个元素不等；首个不同位置 {index}：期望 {e_val}，得到 {g_val}",
        f"values differ{where}: {n_bad}/{expected.numel()} elements; first at {index}: expected {e_val}, got {g_val}")
