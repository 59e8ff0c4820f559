"""Text layout for a terminal: display widths (CJK characters take two columns), padding,
columns, and wrapping to the terminal's width (wcwidth's, which counts cells and breaks a
line where Unicode allows: between words, between two Chinese characters, never inside one)."""

from __future__ import annotations

import unicodedata

def terminal_width(stream=None) -> int | None:
    """The columns of the terminal `stream` (default stdout) writes to; None when it is not one
    (a pipe, a file: nothing is wrapped or cut there)."""
    import os
    import sys

    stream = stream if stream is not None else sys.stdout
    try:
        if not stream.isatty():
            return None
        columns = os.get_terminal_size(stream.fileno()).columns  # the stream's own (fd 1 may be captured)
    except (AttributeError, ValueError, OSError):
        return None
    return columns or None


def columns(rows: list[list[str]], *, width: int | None, flexible: set[int], right: set[int] = frozenset(),
            gap: int = 2, narrowest: int = 12) -> list[str]:
    """Rows of cells in columns `gap` apart, as lines (a row may have fewer cells than others).

    Each column is as wide as its widest cell. When that makes a line wider than `width` (the
    terminal's; None: no limit), the `flexible` columns give up room, the widest first, down to
    `narrowest`, and their cells wrap onto more lines (as `wrap` does); nothing is cut. The
    cells of `right` are right-aligned. Terminal colours in a cell take no room.

    >>> for line in columns([["ex01", "训练窗口：输入与右移一位的目标", "10/10"]], width=30, flexible={1}):
    ...     print(line)
    ex01  训练窗口：输入与   10/10
          右移一位的目标
    """
    import wcwidth

    count = max(len(r) for r in rows)
    widths = [max((wcwidth.width(r[i]) for r in rows if i < len(r)), default=0) for i in range(count)]
    if width is not None:
        excess = sum(widths) + gap * (count - 1) - width
        while excess > 0:
            column = max((i for i in flexible if widths[i] > narrowest), key=lambda i: widths[i], default=None)
            if column is None:
                break  # as narrow as they go: the terminal wraps the rest
            widths[column] -= 1
            excess -= 1
    lines = []
    for row in rows:
        cells = [wcwidth.wrap(cell, widths[i]) or [""] if i in flexible else [cell] for i, cell in enumerate(row)]
        for k in range(max(len(c) for c in cells)):
            parts = []
            for i, cell in enumerate(cells):
                text = cell[k] if k < len(cell) else ""
                parts.append(wcwidth.rjust(text, widths[i]) if i in right else wcwidth.ljust(text, widths[i]))
            lines.append((" " * gap).join(parts).rstrip())
    return lines


def wrap(text: str, width: int | None) -> str:
    """`text` wrapped to `width` columns (None: as it is), line by line; a wrapped line keeps the
    indent of the line it came from, so a report's structure stays readable. Lines break where
    Unicode allows (UAX #14, by wcwidth: between two Chinese characters, never before a
    "，"), and a character is never cut in two; terminal colours are carried over.

    >>> print(wrap("    诊断：把每个字符都放进了词表，然后排序", 24))
        诊断：把每个字符都放
        进了词表，然后排序
    """
    if width is None:
        return text
    import wcwidth

    out = []
    for line in text.split("\n"):
        if wcwidth.width(line) <= width:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip(" "))]
        room = max(width, len(indent) + 8)
        out.extend(wcwidth.wrap(line[len(indent):], room, initial_indent=indent, subsequent_indent=indent) or [line])
    return "\n".join(out)


def width(text: str) -> int:
    """Display width: CJK characters take two columns in a terminal."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, n: int) -> str:
    return text + " " * max(1, n - width(text))
