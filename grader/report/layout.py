"""Text layout for a terminal: display widths (CJK characters take two columns) and padding."""

from __future__ import annotations

import unicodedata



def width(text: str) -> int:
    """Display width: CJK characters take two columns in a terminal."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, n: int) -> str:
    return text + " " * max(1, n - width(text))
