"""Pictures where people would rather look than read, drawn from a check's attachments.

A check attaches plain data with `student.attach(kind, data)`; the text report draws it
under the check's line (`pictures_for`):

- `"shapes"` (ex05): the student's `trace_shapes` dict, drawn as the shape pipeline
  `[B,T] → [B,T,C] → [B,T,V] → [B*T,V] → ()` with their actual shapes, each checked
  against the shape its symbols give (B, T from `input_ids`, C from `hidden`, V from
  `logits`). Optionally `{"got": {...}, "expected": {...}}` to check against the reference.
- `"history"` (ex12): the student's `[{"step", "train", "val"}, ...]`, drawn as terminal
  sparklines beside the lesson's table, and as a PNG (matplotlib, Agg) when the report is
  given a folder for pictures (both drawn by grader.report.loss_curve), in Chinese when a
  font on the computer draws it (else in English, said under the picture's path).
- `"difference"` (ex13): the first differing item of two long lists (token ids, merges),
  made by `first_difference` (attached by `judge.same` whenever two id lists differ),
  drawn with a few items of context.
"""

from __future__ import annotations

from pathlib import Path

from grader.model.messages import say
from grader.report.humanize import int_text
from grader.report.layout import width as _width
from grader.report.differences import item_text
from grader.model.lesson import LESSON_HISTORY  # noqa: F401  (the reports and tests read it here)
from grader.report.loss_curve import _pad, _plain, _strip, cjk_font, loss_lines, loss_png, sparkline  # noqa: F401


# ---------------------------------------------------------------- ex05: the shape pipeline

PIPELINE = (  # key, symbols, what happens on the way to the next stage
    ("input_ids", "[B,T]", "embedding + blocks"),
    ("hidden", "[B,T,C]", "lm_head"),
    ("logits", "[B,T,V]", "view(B*T, V)"),
    ("flat_logits", "[B*T,V]", "cross_entropy"),
    ("loss", "()", ""),
)


def _as_shape(value):
    """A shape as a tuple of ints, or None when it is not one."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


def _shape_text(value) -> str:
    shape = _as_shape(value)
    if shape is None or len(shape) > 8 or any(abs(d) >= 10**12 for d in shape):  # not one, or not one to spell out
        from grader.report.humanize import short

        return short(value, 14)
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def expected_shapes(shapes: dict) -> dict:
    """The shape each stage should have, from B, T (input_ids), C (hidden) and V (logits)."""
    ids, hidden, logits = (_as_shape(shapes.get(k)) for k in ("input_ids", "hidden", "logits"))
    if not ids or len(ids) != 2:
        return {}
    B, T = ids
    out = {"input_ids": (B, T), "loss": ()}
    if hidden and len(hidden) == 3:
        out["hidden"] = (B, T, hidden[2])
    if logits and len(logits) == 3:
        V = logits[2]
        out.update({"logits": (B, T, V), "flat_logits": (B * T, V), "flat_labels": (B * T,)})
    return out


def shape_pipeline(shapes, lang: str, *, expected: dict | None = None, style=None) -> list[str]:
    """The pipeline `[B,T] → [B,T,C] → [B,T,V] → [B*T,V] → ()` with the student's shapes.

    Columns: the stage's name, its symbols, the student's shape, ✓ or the expected shape.
    """
    style = _plain(style)
    if not isinstance(shapes, dict):
        return [say("shapes_not_dict", lang, got=_shape_text(shapes))]
    want = expected if isinstance(expected, dict) else expected_shapes(shapes)
    dims = {}
    ids, hidden, logits = (_as_shape((want or shapes).get(k)) for k in ("input_ids", "hidden", "logits"))
    if ids and len(ids) == 2:
        dims.update(B=ids[0], T=ids[1])
    if hidden and len(hidden) == 3:
        dims["C"] = hidden[2]
    if logits and len(logits) == 3:
        dims["V"] = logits[2]
    cols = []
    for key, symbols, _ in PIPELINE:
        got = shapes.get(key, None)
        got_text = _shape_text(got) if key in shapes else say("shape_missing", lang)
        target = want.get(key) if want else None
        ok = key in shapes and target is not None and _as_shape(got) == tuple(target)
        if target is None:
            mark = "?"
        elif ok:
            mark = style("✓", fg="green")
        else:
            mark = style("✗ " + say("expected", lang) + " " + _shape_text(target), fg="red")
        cols.append((key, symbols, got_text, mark))
    arrow = " ──▶ "
    widths = [max(_width(c[0]), _width(c[1]), _width(c[2]), 4) for c in cols]
    rows = []
    for r in range(3):
        parts = [_pad(c[r], w) for c, w in zip(cols, widths)]
        joiner = arrow if r == 1 else " " * len(arrow)
        rows.append(joiner.join(parts).rstrip())
    marks = ""
    for c, w in zip(cols, widths):
        marks += _pad(c[3], w + len(arrow)) if _width(_strip(c[3])) < w + len(arrow) else c[3] + " "
    legend = "  ".join(f"{k}={v}" for k, v in dims.items())
    head = say("shape_pipeline", lang) + (f"  ({legend})" if legend else "")
    lines = [head, *("  " + r for r in rows), "  " + marks.rstrip()]
    if "flat_labels" in shapes or (want and "flat_labels" in want):
        got = shapes.get("flat_labels")
        target = want.get("flat_labels") if want else None
        ok = target is not None and _as_shape(got) == tuple(target)
        mark = style("✓", fg="green") if ok else ("?" if target is None else style(
            "✗ " + say("expected", lang) + " " + _shape_text(target), fg="red"))
        got_text = _shape_text(got) if "flat_labels" in shapes else say("shape_missing", lang)
        lines.append("  " + say("shape_labels", lang, got=got_text) + "  " + mark)
    return lines


# ---------------------------------------------------------------- ex13: the first difference


def difference_lines(diff, lang: str, style=None) -> list[str]:
    """The items around the first difference, expected above got, the difference marked."""
    style = _plain(style)
    if not isinstance(diff, dict) or "index" not in diff:
        return []
    start, index = diff["start"], diff["index"]
    exp, got = diff["expected_items"], diff["got_items"]
    n = max(len(exp), len(got))
    scalar = all(isinstance(x, int) for x in exp + got)
    lines = [say("difference_head", lang, index=index, same=index) if index else say("difference_at_start", lang)]
    e_label, g_label = say("expected", lang), say("got", lang)
    lw = max(_width(e_label), _width(g_label), 5)
    if scalar:
        cells = []
        for i in range(n):
            e = int_text(exp[i]) if i < len(exp) else "—"  # an int of 5,000 digits by its size
            g = int_text(got[i]) if i < len(got) else "—"
            cells.append((str(start + i), e, g, max(len(e), len(g), len(str(start + i)))))
        def row(label, k):
            parts = []
            for i, c in enumerate(cells):
                text = c[k].rjust(c[3])
                if start + i == index and k:
                    text = style(text, fg="red" if k == 2 else "green", bold=True)
                parts.append(text)
            return "  " + _pad(label, lw) + "  " + "  ".join(parts)
        lines += [row("#", 0), row(e_label, 1), row(g_label, 2)]
        pointer = sum(c[3] + 2 for c in cells[: index - start])
        lines.append("  " + " " * (lw + 2 + pointer) + "^" * cells[index - start][3] if index - start < len(cells) else "")
    else:
        for i in range(n):
            e = exp[i] if i < len(exp) else None
            g = got[i] if i < len(got) else None
            where = f"#{start + i}"
            if start + i < index:
                lines.append(f"    {where:>6}  {item_text(e)}")
            elif start + i == index:
                lines.append(style(f"  ▶ {where:>6}  {_pad(e_label, lw)} {item_text(e)}", fg="green"))
                lines.append(style(f"    {'':>6}  {_pad(g_label, lw)} {item_text(g)}", fg="red"))
            else:
                break
    return [l for l in lines if l]


# ---------------------------------------------------------------- for the report


def pictures_for(check, lang: str, *, style=None, picture_dir: Path | None = None) -> list[str]:
    """The lines to draw under a check, from its attachments (none: [])."""
    data = getattr(check, "attachments", None) or {}
    lines: list[str] = []
    try:
        if "shapes" in data:
            shapes = data["shapes"]
            expected = None
            if isinstance(shapes, dict) and set(shapes) == {"got", "expected"}:
                shapes, expected = shapes["got"], shapes["expected"]
            lines += shape_pipeline(shapes, lang, expected=expected, style=style)
        if "history" in data:
            png, font = None, None
            if picture_dir is not None:
                try:
                    font = cjk_font() if lang == "zh" else None
                    png = loss_png(data["history"], Path(picture_dir) / f"{check.exercise}_loss.png", lang, font=font)
                except Exception:  # a picture must never cost a grade
                    png = None
            lines += loss_lines(data["history"], lang, style=style, png=png, png_in_english=lang == "zh" and not font)
        if "difference" in data:
            lines += difference_lines(data["difference"], lang, style=style)
    except Exception as err:  # noqa: BLE001 - drawing is a courtesy; never break the report
        lines.append(f"({type(err).__name__}: {err})")
    return lines
