"""The documentation: the site builds with `mkdocs build --strict` (a broken link, a missing
page or a page left out of the navigation fails), the README fits on a few screens, and no
page carries a date or the story of a fix (history lives in the commit messages)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Every page a reader is pointed to: the README, the site, and the READMEs beside the code.
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "bench" / "README.md",
                ROOT / "datasets" / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "grader").rglob("README.md"),
                *(ROOT / "examples").rglob("README.md")])
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
STORY = re.compile(r"\bonce (scored|took|passed|cost|lost|stopped)\b|\bused to\b|\bno longer\b", re.IGNORECASE)


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--config-file",
                          str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "students" / "index.html").is_file()


def test_the_readme_fits_on_a_few_screens():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, len(lines)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_carries_a_date_or_a_story(page):
    text = page.read_text(encoding="utf-8")
    found = [line for line in text.splitlines() if DATE.search(line) or STORY.search(line)]
    assert found == [], found
