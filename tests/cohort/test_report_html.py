"""OUT/report.html looked at the way an instructor would: in a browser (headless Chromium).

`grade batch --only ch05` grades the cohort of test_shards (correct, stub, three students with
ex01's off-by-one, one of them also with ex05's view(V, B*T), one of them under the folder name
`<img src=x onerror=alert(1)>`); Chromium takes a screenshot of the report and dumps its DOM.
The page must say: every exercise with its bars, the check failed most, each diagnosed mistake
with its number of students and its section, the copied pair, and the hostile name as text.
Then `grade report` renders it again from a merged folder; and the similarity's stub
exclusion is checked on files made for it.
"""

from __future__ import annotations

import html.parser
import io
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.cohort.test_shards import COPIED_EX01, HOSTILE, ch05_cohort
from tests.sandbox.test_attacks import GRADE, KIT

WINDOW = (1280, 2400)


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs the Debian package)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


def browse(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / "chromium-profile"  # nothing written to the home folder
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
           "--no-first-run", "--hide-scrollbars", f"--window-size={WINDOW[0]},{WINDOW[1]}", *args, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp)


class Page(html.parser.HTMLParser):
    """The DOM Chromium dumped: its tags, and the text of each element with a class (rows, bars)."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.rows: dict[str, list[str]] = {}
        self._open: list[tuple[str, str | None, list[str]]] = []
        self.text_parts: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self.handle_data(" ")  # cells read apart: "3 5.6", not "35.6"
        if tag not in ("br", "meta", "img", "input", "hr", "link"):
            self._open.append((tag, attrs.get("class"), []))

    def handle_endtag(self, tag):
        self.handle_data(" ")
        while self._open:
            name, cls, parts = self._open.pop()
            if cls:
                self.rows.setdefault(cls, []).append(" ".join("".join(parts).split()))
            if self._open:
                self._open[-1][2].extend(parts)
            if name == tag:
                break

    def handle_data(self, data):
        self.text_parts.append(data)
        if self._open:
            self._open[-1][2].append(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.text_parts).split())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    folder = ch05_cohort(tmp / "cohort")
    run = subprocess.run(GRADE + ["--lang", "en", "batch", str(folder), "--out", str(tmp / "out"), "--only", "ch05",
                                  "--no-progress", "-j", "2"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return folder, tmp / "out"


def _top_failed_check(book: dict) -> tuple[str, int]:
    """Counted here from results.json: failures by students who attempted the exercise."""
    counts: Counter = Counter()
    titles = {}
    for result in book["students"].values():
        for ex in result["exercises"]:
            if ex["status"] == "not_implemented":
                continue
            for c in ex["checks"]:
                if not c["passed"] and not c["manual"] and c["kind"] not in ("not_implemented", "missing"):
                    counts[(ex["id"], c["name"])] += 1
                    titles[(ex["id"], c["name"])] = c["title"]
    (key, n), = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:1]
    return titles[key], n


def test_report_in_a_browser(graded, tmp_path):
    folder, out = graded
    page = out / "report.html"
    assert page.is_file()
    raw = page.read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in raw and HOSTILE not in raw  # escaped by the template

    shot = tmp_path / "report.png"
    run = browse(page, tmp_path, f"--screenshot={shot}")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    assert image.size == WINDOW
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50, "the screenshot is blank"
    pixels = {rgb for _, rgb in colors}

    def drawn(rgb):  # the bars' fills: red for 0 points, green for full marks
        return any(sum(abs(a - b) for a, b in zip(p, rgb)) < 24 for p in pixels)

    assert drawn((0xe4, 0x57, 0x56)) and drawn((0x54, 0xa2, 0x4b)), "no bars in the screenshot"
    if os.environ.get("KEEP_REPORT_SHOT"):  # to look at it: KEEP_REPORT_SHOT=/tmp/shot.png
        shutil.copy(shot, os.environ["KEEP_REPORT_SHOT"])

    dom = browse(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    seen = Page(dom.stdout)
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # no markup from a student: the hostile folder name is text, not an <img> with a handler
    assert not any(tag == "img" or any(k.startswith("on") for k in attrs) for tag, attrs in seen.tags)
    assert HOSTILE in seen.text

    # every exercise, with its title and a distribution of 5 students
    cards = seen.rows["card exercise"]
    assert len(cards) == 6  # ex01..ex05 and the total
    for header, card in zip(book["exercises"], cards):
        assert card.startswith(f"{header['id']} / {header['max_score']}") and header["title"] in card
    counts = [int(n) for n in seen.rows["n"]]
    assert len(counts) == 6 * 6 and all(sum(counts[i:i + 6]) == 5 for i in range(0, 36, 6))
    assert counts[6 * 5 + 5] == 1  # one student with full marks in total

    # the check failed most: counted independently from results.json
    title, n = _top_failed_check(book)
    first = seen.rows["failed-check"][0]
    assert first.startswith("ex01") and title in first and f" {n} " in f" {first} " and n == 3

    # the diagnosed mistakes: how many students, the section to revisit, who
    rows = seen.rows["mistake"]
    drop = next(r for r in rows if "off_by_one_drop_last" in r)
    view = next(r for r in rows if "view_v_bt" in r)
    assert drop.startswith("ex01") and view.startswith("ex05") and rows.index(drop) < rows.index(view)
    assert " 3 5.2、5.7 练习 1 " in f" {drop} " and "buggy" in drop and "copier" in drop and HOSTILE in drop
    assert " 1 5.6 " in f" {view} " and "buggy" in view and "copier" not in view
    sections = seen.rows["section"]
    assert sections[0].startswith("5.2、5.7 练习 1 — 3 students") and any(s.startswith("5.6 — 1 student") for s in sections)

    # the similar pairs: the copy of ex01 first, nobody paired with the stub
    pairs = seen.rows["pair"]
    assert pairs[0].startswith("ex01") and "buggy ↔ copier" in " ".join(p for p in pairs if p.startswith("ex01"))
    assert not any("stub" in p for p in pairs)


def test_report_from_a_merged_folder(graded, tmp_path):
    folder, out = graded
    merged = tmp_path / "merged"
    run = subprocess.run(GRADE + ["merge", str(out), "--out", str(merged)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    bare = subprocess.run(GRADE + ["--lang", "en", "report", str(merged)], capture_output=True, text=True, timeout=120)
    assert bare.returncode == 0, bare.stderr
    text = Page((merged / "report.html").read_text(encoding="utf-8")).text
    assert "Similarity not computed" in text and "off_by_one_drop_last" in text

    full = subprocess.run(GRADE + ["--lang", "zh", "report", str(merged), "--submissions", str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert full.returncode == 0, full.stderr
    seen = Page((merged / "report.html").read_text(encoding="utf-8"))
    assert "班级评分报告" in seen.text and any("buggy ↔ copier" in p for p in seen.rows["pair"])
    # the students' files were read from a temporary staging folder: OUT gained only the page
    shown = sorted(p.name for p in merged.iterdir() if not p.name.startswith("."))  # (.grade-batch.lock)
    assert shown == ["cohort.json", "grades.csv", "report.html", "results.json"]  # (the shards' cohort, named)


def test_report_of_a_folder_without_a_gradebook(tmp_path):
    run = subprocess.run(GRADE + ["report", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "results.json" in run.stderr and "Traceback" not in run.stderr


def test_the_stub_is_boilerplate(tmp_path):
    """Two students who kept the stub's docstrings and wrote different code are not similar;
    without the stub excluded, copydetect would pair them (the stub is most of each file)."""
    from copydetect import CodeFingerprint, compare_files

    from grader.cohort.similarity import similar_pairs
    from grader.model.course import load_course

    course = load_course(KIT / "course.toml")
    stub = (KIT / "exercises" / "ex01_windows.py").read_text(encoding="utf-8")
    own = {"a": stub + "\n\ndef helper_a(values):\n    return sorted(set(values))[::-1]\n",
           "b": stub + "\n\nclass Helper:\n    def run(self, n):\n        total = 0\n"
                       "        for i in range(n):\n            total += i * i\n        return total\n",
           "c": stub, "d": COPIED_EX01}
    folders = {}
    for name, text in own.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex01_windows.py").write_text(text, encoding="utf-8")
        folders[name] = tmp_path / name
    whole = [CodeFingerprint("ex01_windows.py", 25, 6, fp=io.StringIO(own[n])) for n in ("a", "b")]
    _, (share_a, share_b), _ = compare_files(*whole)
    assert min(share_a, share_b) > 0.5  # what the stub alone makes two files share
    assert similar_pairs(course, ["ex01"], folders) == []

    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "ex01_windows.py").write_text(COPIED_EX01.replace("result", "acc"), encoding="utf-8")
    (tmp_path / "f").mkdir()  # a link (to the solution, here) is never followed
    os.symlink(KIT / "solutions" / "ex01_windows.py", tmp_path / "f" / "ex01_windows.py")
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "ex01_windows.py").write_text((KIT / "solutions" / "ex01_windows.py").read_text(encoding="utf-8"),
                                                    encoding="utf-8")
    pairs = similar_pairs(course, ["ex01"], {**folders, **{n: tmp_path / n for n in "efg"}})
    assert [(p.a, p.b) for p in pairs] == [("d", "e")] and pairs[0].similarity == 1.0


def test_similarity_does_without_pyplot_and_leaves_the_real_one(tmp_path):
    """copydetect imports pyplot for a report of its own (about 0.7 s of every batch); the
    similarity never loads it, finds the same pairs, and a later real import still works."""
    import sys

    script = f"""
import sys
from pathlib import Path
from grader.cohort.similarity import similar_pairs
from grader.model.course import load_course
course = load_course(Path({str(KIT / "course.toml")!r}))
root = Path({str(tmp_path)!r})
for name in "ab":
    (root / name).mkdir()
    (root / name / "ex01_windows.py").write_text({COPIED_EX01!r}, encoding="utf-8")
pairs = similar_pairs(course, ["ex01"], {{n: root / n for n in "ab"}})
assert [(p.a, p.b, p.similarity) for p in pairs] == [("a", "b", 1.0)], pairs
assert "matplotlib.pyplot" not in sys.modules and "matplotlib" not in sys.modules
import matplotlib.pyplot as plt
assert callable(plt.plot) and sys.modules["matplotlib.pyplot"] is plt
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=KIT)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_a_right_to_left_name_reorders_nothing_beside_it(tmp_path):
    """`\u202eecila` (a right-to-left override in a folder's name) paired with `bob`: laid out by
    Chromium, bob stays right of the arrow (once the override carried on past the name, and the
    pair read "bob ↔ alice")."""
    from grader.cohort.report_html import cohort_summary, render_report
    from grader.cohort.similarity import SimilarPair

    page = render_report(cohort_summary({"students": {}, "exercises": []}, None, "en"),
                         [SimilarPair("ex01", "\u202eecila", "bob", 1.0, 1.0, 100)], "en")
    probe = """<script>
      const names = [...document.querySelectorAll("tr.pair .student")];
      const cell = names[0].parentElement, arrow = document.createRange();
      const text = [...cell.childNodes].find(n => n.nodeType === 3 && n.textContent.includes("↔"));
      arrow.selectNodeContents(text);
      const at = arrow.getBoundingClientRect().left, bob = names[1].getBoundingClientRect().left;
      document.body.setAttribute("data-bob-right-of-arrow", String(bob > at));
    </script>"""
    (tmp_path / "report.html").write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    dom = browse(tmp_path / "report.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-bob-right-of-arrow="true"' in dom.stdout, dom.stdout[-1500:]


def test_similarity_is_the_same_in_every_process(tmp_path):
    """copydetect hashed k-grams with Python's salted hash(): the matched length of a pair moved
    from process to process (606-611 characters here), so two reports of one cohort differed."""
    src = (KIT / "solutions" / "ex13_bpe.py").read_text(encoding="utf-8").splitlines()
    edited = [line + f"  # changed {i}" if i % 7 == 3 else line.replace("pair", "pr") if i % 11 == 5 else line
              for i, line in enumerate(src)]
    for name, lines in (("a", src), ("b", edited)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex13_bpe.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = ("from pathlib import Path\nfrom grader.model.course import load_course\n"
            "from grader.cohort.similarity import similar_pairs\n"
            f"root = Path({str(tmp_path)!r})\n"
            f"pairs = similar_pairs(load_course(Path({str(KIT / 'course.toml')!r})), ['ex13'], "
            "{n: root / n for n in 'ab'})\nprint([(p.share_a, p.share_b, p.tokens) for p in pairs])\n")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(1, 6)}
    assert len(seen) == 1 and "(1.0, 1.0" in seen.pop()
