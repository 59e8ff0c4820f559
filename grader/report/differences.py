"""Where two long lists first differ (token ids, merges): the judge finds it, reports draw it."""

from __future__ import annotations

from grader.model.messages import say

def first_difference(expected, got, context: int = 3) -> dict | None:
    """Where two lists first differ, with a few items either side; None when they are equal.

    `first_difference([1, 2, 3, 4], [1, 2, 9, 4])` ->
    `{"index": 2, "expected": 3, "got": 9, "len_expected": 4, "len_got": 4, "start": 0,
      "expected_items": [1, 2, 3, 4], "got_items": [1, 2, 9, 4]}`.
    A shorter list differs where it ends (`"got": None`).
    """
    expected, got = list(expected), list(got)
    n = min(len(expected), len(got))
    index = next((i for i in range(n) if not _same_item(expected[i], got[i])), None)
    if index is None:
        if len(expected) == len(got):
            return None
        index = n
    start = max(0, index - context)
    return {
        "index": index,
        "expected": _plain_item(expected[index]) if index < len(expected) else None,
        "got": _plain_item(got[index]) if index < len(got) else None,
        "len_expected": len(expected), "len_got": len(got), "start": start,
        "expected_items": [_plain_item(x) for x in expected[start:index + context + 1]],
        "got_items": [_plain_item(x) for x in got[start:index + context + 1]],
    }


def _same_item(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_item(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b or (isinstance(a, int) and isinstance(b, int)
                                             and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def _plain_item(x):
    if isinstance(x, (list, tuple)):
        return tuple(_plain_item(v) for v in x)
    return x


def item_text(x) -> str:
    """A merge `((101, 32), 256)` as `(101, 32) → 256`; anything else as repr."""
    if (isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], tuple) and len(x[0]) == 2
            and isinstance(x[1], int)):
        return f"({x[0][0]}, {x[0][1]}) → {x[1]}"
    if x is None:
        return "—"
    from grader.report.humanize import short  # bounded before it is built: an item may be huge

    return short(x, 24)


def difference_text(diff: dict, lang: str) -> str:
    """One sentence for the failure message (also in json/CI output)."""
    return say("first_difference", lang, index=diff["index"], expected=item_text(diff["expected"]),
               got=item_text(diff["got"]), len_expected=diff["len_expected"], len_got=diff["len_got"])
