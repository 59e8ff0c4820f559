"""Numbers as people read them.

- a big count: `count(123456789)` -> `123,456,789 (123.5M)`; small counts stay plain (`4,225`);
- bytes: `nbytes(248000000)` -> `248,000,000 B (248 MB / 236.5 MiB)`;
- a loss: `loss(2.491137)` -> `2.4911` (4 decimals, as the lesson prints them).

Nothing here knows about tensors; grader/compare.py and the report call these.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

_SI = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
_BYTES_SI = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
_BYTES_IEC = ((1024**4, "TiB"), (1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB"))

BIG = 100_000  # from here on a count also gets its short form


def _scaled(value: float, units) -> str | None:
    """`value` in the largest unit it reaches, one decimal rounded half up (781.25 -> 781.3)."""
    for i, (size, unit) in enumerate(units):
        if abs(value) >= size:
            rounded = Decimal(repr(value / size)).quantize(Decimal("0.1"), ROUND_HALF_UP)
            if abs(rounded) >= 1000 and i > 0:  # 999,999 is 1.0M, not 1000K
                size, unit = units[i - 1]
                rounded = Decimal(repr(value / size)).quantize(Decimal("0.1"), ROUND_HALF_UP)
            text = str(rounded).removesuffix(".0")
            return f"{text}{unit}" if unit in ("T", "B", "M", "K") else f"{text} {unit}"
    return None


WHOLE_DIGITS = 30  # an int with more digits is shown by its size (str() of a huge one costs, or raises)


def int_text(n: int) -> str:
    """An int as written, or by its size when it has more than `WHOLE_DIGITS` digits.

    `int_text(12)` -> `12`; `int_text(10**5000)` -> `≈10^5000 (5001 digits)`.
    """
    if abs(n) < 10**WHOLE_DIGITS:
        return str(n)
    digits = int((abs(n).bit_length() - 1) * math.log10(2)) + 1  # may be one short: a bound, not a count
    if abs(n) >= 10**digits:
        digits += 1
    return f"{'-' if n < 0 else ''}≈10^{digits - 1} ({digits} digits)"


def compact(n: int) -> str:
    """`123456789` -> `123.5M`; `4225` -> `4.2K`; `12` -> `12`."""
    return _scaled(n, _SI) or str(n)


def count(n: int) -> str:
    """A count with thousands separators, and its short form when it is big.

    `count(123456789)` -> `123,456,789 (123.5M)`; `count(4225)` -> `4,225`.
    """
    if abs(n) < BIG:
        return f"{n:,}"
    if abs(n) >= 10**WHOLE_DIGITS:
        return int_text(n)
    return f"{n:,} ({compact(n)})"


def nbytes(n: int) -> str:
    """A size in bytes, in decimal and binary units.

    `nbytes(248000000)` -> `248,000,000 B (248 MB / 236.5 MiB)`; `nbytes(512)` -> `512 B`.
    """
    si, iec = _scaled(n, _BYTES_SI), _scaled(n, _BYTES_IEC)
    if si is None and iec is None:
        return f"{n:,} B"
    return f"{n:,} B ({si or f'{n} B'} / {iec or f'{n} B'})"


def nbytes_short(n: int) -> str:
    """A size in its largest decimal unit: `nbytes_short(20_000_000)` -> `20 MB`; `512` -> `512 B`."""
    return _scaled(n, _BYTES_SI) or f"{n:,} B"


def loss(x: float) -> str:
    """A loss to 4 decimals: `loss(2.491137)` -> `2.4911`."""
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return str(x)
    return f"{float(x):.4f}"


def number(x) -> str:
    """Any plain number for a report: ints as `count`, floats to 4 decimals (tiny ones in 3 significant digits)."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return count(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return f"{x:.4f}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3g}"
    return str(x)


def _is_tensor(value) -> bool:
    """A tensor, told without importing torch (the report never does)."""
    return type(value).__name__ in ("Tensor", "Parameter") and hasattr(value, "shape") and hasattr(value, "dim")


def short(value, limit: int = 60) -> str:
    """A one-line form for the report: shapes for tensors, values for the rest. Never longer
    than about `limit` characters, and never built longer first: a student's answer may be
    a dict keyed by 16 MB tensors, or an int of 5,000 digits."""
    if _is_tensor(value):
        return str(tuple(value.shape)) if value.dim() else number_in_value(value.item())
    if isinstance(value, tuple) and value and all(_is_tensor(v) for v in value):
        return " ".join(short(v) for v in value[:8]) + (" …" if len(value) > 8 else "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)  # a count read by people: 123,456,789 (123.5M)
    text = _inline(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _inline(value, limit: int = 60, depth: int = 0) -> str:
    """One line, recursively, about `limit` characters at most however large the value;
    tensors inside containers (dict keys too) as `T(2, 4)`."""
    if depth > 6 or limit <= 0:
        return "…"
    if _is_tensor(value):
        return f"T{tuple(value.shape)}" if value.dim() else number_in_value(value.item())
    if isinstance(value, dict) and "__unsupported__" in value and len(value) == 1:
        return f"<{_cut(str(value['__unsupported__']), limit)}>"
    if isinstance(value, dict):
        pairs = ((k, v) for k, v in value.items())
        return _items("{", "}", pairs, limit, depth, lambda kv, room: f"{_inline(kv[0], room, depth + 1)}: "
                                                                    f"{_inline(kv[1], room, depth + 1)}")
    if isinstance(value, (list, tuple)):
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ",)" if len(value) == 1 else ")")
        return _items(opening, closing, iter(value), limit, depth, lambda v, room: _inline(v, room, depth + 1))
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        return number_in_value(value)
    if isinstance(value, str):
        text = repr(value[:limit]).replace("\n", " ")
        return text if len(value) <= limit else text[:-1] + "…" + text[-1]
    return _cut(repr(value).replace("\n", " "), limit)  # plain data holds nothing else


def _items(opening: str, closing: str, items, limit: int, depth: int, show) -> str:
    """`[a, b, …]`: items shown while they fit in `limit`, the rest as "…", never all rendered."""
    parts, used = [], len(opening) + len(closing)
    for item in items:
        if used >= limit:
            parts.append("…")
            break
        text = show(item, limit - used)
        parts.append(text)
        used += len(text) + 2
    return opening + ", ".join(parts) + closing


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


def number_in_value(x) -> str:
    """A number inside a value (a list item, a tensor element): ints plain, floats to 4 decimals.

    A number on its own gets the long form from `short` (`123,456,789 (123.5M)`);
    inside a list, thousands separators would read as more items.
    """
    if isinstance(x, bool) or not isinstance(x, float):
        if isinstance(x, int):
            return int_text(x)
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.4f}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3g}"
