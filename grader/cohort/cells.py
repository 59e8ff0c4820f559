"""A student's name as a cell of grades.csv: never a formula, the header, the max row or a value.

    >>> print(safe_cell('=HYPERLINK("http:evil","10")'), safe_cell("0123"), safe_cell("alice"))
    '=HYPERLINK("http:evil","10") '0123 alice
"""

from __future__ import annotations

import re

HEADER_NAME = "student"
MAX_ROW = "(max)"
# OWASP's formula starts, the full-width forms some spreadsheets read as them, the quote that
# marks a neutralised cell, and "(" (the max row's look-alikes)
_RISKY_START = ("=", "+", "-", "@", "'", "(", "＝", "＋", "－", "＠")


def safe_cell(name: str) -> str:
    """A name as a spreadsheet shows it, never a formula, the header or the max row (injective:
    a quote is put before every risky name, and every name starting with one is risky).
    Leading white space, control or invisible characters (tab, CR, LF, a zero-width space, a
    space before `=`) count too, and so does any name that reads as the header or the max row
    once case, width and invisible characters are set aside (`Student`, `student `, `（max）`).

    >>> safe_cell('=HYPERLINK("http:evil","10")'), safe_cell("(max)"), safe_cell("alice"), safe_cell(" =1")
    ('\\'=HYPERLINK("http:evil","10")', "'(max)", 'alice', "' =1")
    >>> safe_cell("Student "), safe_cell("\u200b(max)"), safe_cell("（max）")
    ("'Student ", "'\u200b(max)", "'（max）")
    >>> safe_cell("0123"), safe_cell("2026-03-04"), safe_cell("TRUE"), safe_cell("team 7")
    ("'0123", "'2026-03-04", "'TRUE", 'team 7')
    """
    import unicodedata

    first = name[:1]
    if name.startswith(_RISKY_START) or (first and (first.isspace() or unicodedata.category(first)[0] in "CZM"
                                                    or first in _BLANK_LETTERS)) \
            or _passes_for_a_title(name) or _A_VALUE.match(name):
        return "'" + name
    return name


def _passes_for_a_title(name: str) -> bool:
    """Whether a name says what the header or the max row says, or draws like it in letters
    of other scripts (Unicode's confusables table, through the `confusable_homoglyphs` library
    where it is installed, as it is with the instructor's extras): `ѕtudent` with a Cyrillic ѕ,
    `(mах)` with a Cyrillic а and х.

    >>> _passes_for_a_title("\u0455tudent"), _passes_for_a_title("(m\u0430\u0445)"), _passes_for_a_title("alice")
    (True, True, False)
    """
    said = _reads_as(name)
    titles = (_reads_as(HEADER_NAME), _reads_as(MAX_ROW))
    return said in titles or _latin_skeleton(said) in titles


def _latin_skeleton(text: str) -> str:
    """Each letter that is not ASCII replaced by the ASCII letter it draws like, if any
    (`"ѕtudent"` -> `"student"`); `text` as it is without the library (a student's install:
    grades.csv is the instructor's)."""
    try:
        from confusable_homoglyphs.confusables import confusables_data
    except ImportError:
        return text
    out = []
    for char in text:
        alike = [] if char.isascii() else [h["c"] for h in confusables_data.get(char, ()) if h["c"].isascii()]
        out.append(alike[0] if alike else char)
    return "".join(out).casefold()


# What a spreadsheet opening the CSV reads as a value, not a name: `0123` and `123` would be
# one number, `1e2` 100, `3-4` a date, `TRUE` a boolean. Quoted, each stays its own text.
_MONTHS = r"(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sept?(ember)?|oct(ober)?|nov(ember)?|dec(ember)?)\.?"
_A_VALUE = re.compile(
    r"(?i)^\s*("
    r"[$€£¥]?\s*[+-]?[$€£¥]?(\d+([.,]\d*)*|[.,]\d+)(e[+-]?\d+)?\s*%?"  # 0123, 1e2, 1,50, $5, 50%
    r"|\d{1,4}[-/.]\d{1,2}([-/.]\d{1,4})?"  # 3-4, 2026-03-04, 2026/03/04
    r"|\d{1,2}:\d{2}(:\d{2})?(\s*[ap]\.?m\.?)?"  # 12:30, 9:05 pm
    rf"|\d{{1,2}}[-/ ]?{_MONTHS}([-/ ]?\d{{1,4}})?|{_MONTHS}[-/ ]?\d{{1,4}}"  # 5-Jan, Jan-05, Mar 5
    r"|true|false|nan|[+-]?inf(inity)?"
    r")\s*$")

# Letters that draw nothing (Hangul fillers): Unicode's default-ignorable code points outside
# the categories dropped below
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")


def _reads_as(name: str) -> str:
    """What a name's letters and digits say once width (NFKC) and case are folded, everything
    else (brackets of any shape, blanks that draw nothing such as U+2800, marks, invisible and
    control characters) set aside: `_reads_as("\u200bStudent ")` -> "student",
    `_reads_as("\u2768max\u2769")` -> "max". A name that says what the header or the max row
    says is quoted (a student named `Max` too: harmless, and never mistaken)."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in folded if unicodedata.category(c)[0] in "LN" and c not in _BLANK_LETTERS)
