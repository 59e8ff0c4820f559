"""ex12's loss curve: terminal sparklines beside the lesson's table, and a PNG (matplotlib, Agg).

    >>> sparkline([4.7, 2.8, 2.5, 2.5])
    '█▂▁▁'

`loss_lines(history, lang)` draws the student's `[{"step", "train", "val"}, ...]` and the
lesson's on one scale; `loss_png(history, path, lang, font=cjk_font())` writes the same as a
picture file, its labels in Chinese when a font on the computer draws Chinese, else in
English (and the report says so). grader.report.pictures draws them under the check.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from grader.model.lesson import LESSON_HISTORY
from grader.model.messages import say
from grader.report.humanize import loss as fmt_loss
from grader.report.layout import width as _width

SPARK = "▁▂▃▄▅▆▇█"
MAX_SPARK = 60


def _plain(style):
    return style or (lambda text, **_: text)


def _strip(text: str) -> str:
    """`text` without terminal colours (their escapes take no columns)."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _pad(text: str, n: int) -> str:
    return text + " " * max(0, n - _width(_strip(text)))


def _rjust(text: str, n: int) -> str:
    return " " * max(0, n - _width(text)) + text


def sparkline(values, lo: float | None = None, hi: float | None = None) -> str:
    """`[4.7, 2.8, 2.5, 2.5]` -> `█▂▁▁`; None draws `·`. One scale for lines drawn together."""
    real = [v for v in values if v is not None]
    if not real:
        return "·" * len(values)
    lo = min(real) if lo is None else lo
    hi = max(real) if hi is None else hi
    span = hi - lo
    out = []
    for v in values:
        if v is None:
            out.append("·")
        elif span <= 0:
            out.append(SPARK[0])
        else:
            out.append(SPARK[max(0, min(len(SPARK) - 1, round((v - lo) / span * (len(SPARK) - 1))))])
    return "".join(out)


def _clean_history(history) -> list[dict]:
    rows = []
    if not isinstance(history, (list, tuple)):
        return rows
    for row in history:
        if not isinstance(row, dict):
            continue
        try:
            rows.append({"step": int(row["step"]), "train": float(row["train"]), "val": float(row["val"])})
        except (KeyError, TypeError, ValueError):
            continue
    return rows


def loss_lines(history, lang: str, *, lesson=LESSON_HISTORY, style=None, png: Path | None = None,
               png_in_english: bool = False) -> list[str]:
    """Sparklines of the student's train and val losses beside the lesson's, and the table;
    `png` the picture's path, `png_in_english` when its labels had to be English."""
    style = _plain(style)
    rows = _clean_history(history)
    if not rows:
        return [say("history_empty", lang)]
    if len(rows) > MAX_SPARK:  # keep the first and last, spread the rest
        picks = sorted({round(i * (len(rows) - 1) / (MAX_SPARK - 1)) for i in range(MAX_SPARK)})
        shown = [rows[i] for i in picks]
    else:
        shown = rows
    by_step = {r["step"]: r for r in lesson}
    steps = [r["step"] for r in shown]
    values = [r[k] for r in shown for k in ("train", "val")] + [r[k] for r in lesson for k in ("train", "val")]
    lo, hi = min(values), max(values)

    def lesson_at(step, key):
        return by_step[step][key] if step in by_step else None

    you, book = say("yours", lang), say("lesson", lang)
    name_w = max(_width(you), _width(book)) + 7
    lines = [say("loss_curve", lang, first=steps[0], last=steps[-1])]
    if png:
        lines[0] += "  " + say("picture_at", lang, path=_shown_path(png))
        if png_in_english:
            lines.append("  " + say("picture_in_english", lang))
    for key in ("train", "val"):
        mine = [r[key] for r in shown]
        theirs = [lesson_at(s, key) for s in steps]
        lines.append("  " + _pad(f"{key:<5} {you}", name_w) + sparkline(mine, lo, hi)
                     + f"  {fmt_loss(mine[0])} → {fmt_loss(mine[-1])}")
        if any(v is not None for v in theirs):
            known = [v for v in theirs if v is not None]
            lines.append("  " + _pad(f"{key:<5} {book}", name_w) + sparkline(theirs, lo, hi)
                         + f"  {fmt_loss(known[0])} → {fmt_loss(known[-1])}")
    lines.append("  " + say("ex12_table", lang))
    head = "    " + "step".rjust(5) + "".join("  " + _rjust(t, 12) for t in (
        f"{you} train", f"{you} val", f"{book} train", f"{book} val"))
    lines.append(head)
    mine_by_step = {r["step"]: r for r in rows}
    for ref in lesson:
        got = mine_by_step.get(ref["step"])
        if got is None:
            lines.append(f"    {ref['step']:>5}  {'—':>12}  {'—':>12}  {fmt_loss(ref['train']):>12}  {fmt_loss(ref['val']):>12}")
            continue
        same = all(fmt_loss(got[k]) == fmt_loss(ref[k]) for k in ("train", "val"))
        mark = style("✓", fg="green") if same else style(
            "Δ " + f"{got['val'] - ref['val']:+.4f}", fg="yellow")
        lines.append(f"    {ref['step']:>5}  {fmt_loss(got['train']):>12}  {fmt_loss(got['val']):>12}  "
                     f"{fmt_loss(ref['train']):>12}  {fmt_loss(ref['val']):>12}  {mark}")
    last = rows[-1]
    if last["step"] not in by_step:
        lines.append(f"    {last['step']:>5}  {fmt_loss(last['train']):>12}  {fmt_loss(last['val']):>12}")
    return lines


def _shown_path(path: Path) -> str:
    """The path relative to the current folder when it is inside it (shorter to read)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
                "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC", "Arial Unicode MS")
# font files whose names say they may draw Chinese (Noto/Source Han CJK, WenQuanYi, SimHei, SimSun,
# Microsoft YaHei, PingFang, Hiragino, Droid Sans Fallback, …)
CJK_FILE = re.compile(r"cjk|wqy|wenquan|simhei|simsun|msyh|yahei|pingfang|hiragino|heiti|songti|kaiti|"
                      r"sourcehan|notosanssc|notoserifsc|droidsansfallback|arialuni|uming|ukai", re.IGNORECASE)
GLYPHS = "你的曲线与课文"  # the picture's Chinese must all be there


@functools.cache
def cjk_font(candidates: tuple[str, ...] | None = None) -> str | None:
    """The file of a font on this computer that draws the picture's Chinese, or None.

    matplotlib's own list first (made when matplotlib first ran: a font installed since is
    not in it), then the system's font files whose names say CJK; a font is taken only when
    it has the glyphs. `candidates`: the files to try instead of the system's.
    """
    from matplotlib import font_manager

    if candidates is None:
        listed = [f.fname for f in font_manager.fontManager.ttflist if f.name in CJK_FAMILIES]
        candidates = tuple(listed + [p for p in font_manager.findSystemFonts() if CJK_FILE.search(Path(p).name)])
    return next((path for path in candidates if _draws(path, GLYPHS)), None)


def _draws(path: str, text: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        charmap = FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):  # not a font FreeType reads
        return False
    return all(ord(ch) in charmap for ch in text)


def loss_png(history, path: Path, lang: str, *, lesson=LESSON_HISTORY, font: str | None = None) -> Path | None:
    """Draw the student's curve beside the lesson's into `path` (PNG). None if nothing to draw.

    The labels are in `lang` when it is English, or when `font` (a font file that draws
    Chinese, `cjk_font()`) is given; else in English (pictures_for says so under the picture).
    """
    rows = _clean_history(history)
    if not rows:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

    text_lang = "zh" if lang == "zh" and font else "en"
    words = {"fontproperties": FontProperties(fname=font)} if text_lang == "zh" else {}
    fig = Figure(figsize=(8, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    you, book = say("yours", text_lang), say("lesson", text_lang)
    steps = [r["step"] for r in rows]
    colors = {"train": "#1f77b4", "val": "#d62728"}
    for key in ("train", "val"):
        ax.plot(steps, [r[key] for r in rows], color=colors[key], lw=1.8, label=f"{key} ({you})")
        ax.plot([r["step"] for r in lesson], [r[key] for r in lesson], color=colors[key], lw=1, ls="--",
                marker="o", mfc="white", ms=6, label=f"{key} ({book})")
    ax.axhline(2.49, color="grey", lw=0.8, ls=":")
    ax.annotate("2.49", xy=(max(steps + [2700]), 2.49), xytext=(4, 4), textcoords="offset points",
                color="grey", fontsize=8)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(say("loss_png_title", text_lang), **words)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, ncol=2, prop=words.get("fontproperties"))
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
