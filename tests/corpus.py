"""The lesson's corpus as the kit's own tests read it: the repository's copy in `datasets/`.

A fresh clone holds it (it ships with the repository), so no test looks outside the checkout
for it. `FOLDER` is what the tests set as `GPT_COURSE_DATA` (tests/conftest.py); `FILE` is
the file itself, for a test that serves or copies it.

>>> FILE.relative_to(FOLDER).as_posix()
'tinyshakespeare/input.txt'
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent.parent / "datasets"
FILE = FOLDER / "tinyshakespeare" / "input.txt"
