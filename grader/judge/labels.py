"""A call as Python would read it, for the report's labels.

No thousands separators inside a call (`gpt_params(13, 499, 2084, tied=False)`, not
`2,084`, which reads as another argument), brackets closed when a long argument is
shortened (`make_windows([25, 20, 30, 8, …], 2, stride=3)`), a tensor by its shape
(`tensor(shape=(4, 8))`, not its values), a data file by name (`<tinyshakespeare>`).

    >>> call_label("gpt_params", (13, 499, 2084), {"tied": False})
    'gpt_params(13, 499, 2084, tied=False)'
"""

from __future__ import annotations

ARG_WIDTH = 28  # characters one argument may take before it is shortened
MAX_ITEMS = 6   # items of a list shown before "…"


def argument(value, width: int = ARG_WIDTH, depth: int = 0) -> str:
    """One argument, at most about `width` characters, always well bracketed."""
    if depth > 3:
        return "…"
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is always there when a call is made
        torch = None
    if torch is not None and isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return f"tensor({argument(value.item(), width, depth + 1)})"
        return f"tensor(shape={tuple(value.shape)})"
    if torch is not None and isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if len(text) <= 10 else f"{value:.6g}"
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= width else text[: max(width - 2, 4)] + "…" + text[0]
    if isinstance(value, (list, tuple)):
        return _sequence(value, width, depth)
    if isinstance(value, dict):
        items = [f"{argument(k, width, depth + 1)}: {argument(v, width, depth + 1)}" for k, v in value.items()]
        return _bracketed("{", "}", items, width)
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _sequence(value, width: int, depth: int) -> str:
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    items = [argument(v, width, depth + 1) for v in value[: MAX_ITEMS + 1]]
    if isinstance(value, tuple) and len(value) == 1:
        return f"({items[0]},)"
    return _bracketed(opening, closing, items, width, total=len(value))


def _bracketed(opening: str, closing: str, items: list[str], width: int, total: int | None = None) -> str:
    """`[a, b, …]`: as many items as fit in `width` (one at least), the bracket always closed."""
    total = len(items) if total is None else total
    shown: list[str] = []
    for item in items[:MAX_ITEMS]:
        if shown and len(", ".join(shown + [item])) + 4 > width:
            break
        shown.append(item)
    more = total > len(shown)
    return opening + ", ".join(shown + (["…"] if more else [])) + closing


def call_label(name: str, args: tuple, kwargs: dict) -> str:
    """`name(arg, …, key=value)` as Python would read it (see the module's examples)."""
    parts = [argument(a) for a in args] + [f"{k}={argument(v, 20)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"
