"""OUT/report.html looked at the way an instructor would: in a browser (headless Chromium).

`grade batch --only ch05 --format text` grades tests.cohorts.ch05_cohort (correct, stub, three
students with ex01's off-by-one, one of them also with ex05's view(V, B*T), one of them under the
folder name `<img src=x onerror=alert(1)>`), with an empty folder and a `sam.zip` beside them;
Chromium takes a screenshot of the report and dumps its DOM. The page must say, in English:
every student with their points and a link to their own report, every exercise with its bars,
the check failed most, each diagnosed mistake with its number of students and its section, the
copies in one cluster (the two identical files as one version), everything refused, and the
hostile name as text.
Then `grade report` renders it again from a merged folder; and the similarity's stub
exclusion is checked on files made for it.
"""

from __future__ import annotations

import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest

from tests.cohorts import COPIED_EX01, HOSTILE, ch05_cohort
from grader.model.course import load_course
from tests.kit import KIT
from tests.in_process import grade
from tests.runner_double import runner_double

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
    (folder / "empty").mkdir()  # a student who handed in nothing
    (folder / "sam.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # never unpacked: no student's folder
    with runner_double():  # what is graded matters here, not where the code ran
        run = grade("--lang", "en", "batch", str(folder), "--out", str(tmp / "out"), "--only", "ch05", "--no-progress",
                    "-j", "1", "--format", "text")
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
    dom = browse(page, tmp_path, f"--screenshot={shot}", "--dump-dom")  # one page load: the picture and the DOM
    assert dom.returncode == 0 and shot.is_file(), dom.stderr[-2000:]
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

    seen = Page(dom.stdout)
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # no markup from a student: the hostile folder name is text, not an <img> with a handler
    assert not any(tag == "img" or any(k.startswith("on") for k in attrs) for tag, attrs in seen.tags)
    assert HOSTILE in seen.text

    # the whole page in English: its words, titles, checks, sections (no Chinese name in the cohort)
    assert not re.search(r"[\u4e00-\u9fff]", seen.text), re.findall(r".{30}[\u4e00-\u9fff]+.{30}", seen.text)

    # the roster: every student, their total and points per exercise, a link to their own report
    students = book["students"]
    roster = seen.rows["roster"]
    assert len(roster) == len(students) == 6
    for (name, result), row in zip(sorted(students.items()), roster):
        scores = " ".join(str(e["score"]) for e in result["exercises"])
        assert row.startswith(f"{name} {result['score']}/{sum(e['max_score'] for e in book['exercises'])} "), row
        assert f" {scores} " in f" {row} ", (scores, row)
    links = [attrs["href"] for tag, attrs in seen.tags if tag == "a" and attrs.get("class") == "own-report"]
    assert len(links) == len(students)
    for href in links:  # each the student's own text report, in OUT
        own = out / urllib.parse.unquote(href)
        assert own.parent == out / "reports" and own.suffix == ".txt" and own.is_file(), href
    own = (out / urllib.parse.unquote(links[sorted(students).index("good")])).read_text(encoding="utf-8")
    assert f"{students['good']['score']}/" in own  # good's own report, its total

    # everything refused: the empty folder (its note) and sam.zip (no folder), not only on stderr
    refused = seen.rows["refused"]
    assert any(r.startswith("empty ") and students["empty"]["note"] in r for r in refused), refused
    assert any(r.startswith("sam.zip ") and "not a folder" in r for r in refused), refused

    # every exercise, with its title and a distribution of the 6 students
    cards = seen.rows["card exercise"]
    assert len(cards) == 6  # ex01..ex05 and the total
    for header, card in zip(book["exercises"], cards):
        assert card.startswith(f"{header['id']} / {header['max_score']}") and header["title"] in card
    counts = [int(n) for n in seen.rows["n"]]
    assert len(counts) == 6 * 6 and all(sum(counts[i:i + 6]) == 6 for i in range(0, 36, 6))
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
    assert " 3 section 5.2, 5.7 exercise 1 " in f" {drop} " and "buggy" in drop and "copier" in drop and HOSTILE in drop
    assert " 1 section 5.6 " in f" {view} " and "buggy" in view and "copier" not in view
    sections = seen.rows["section"]
    assert sections[0].startswith("section 5.2, 5.7 exercise 1 — 3 students")
    assert any(s.startswith("section 5.6 — 1 student") for s in sections)

    # the similar submissions in clusters: ex01's three copies one cluster, the two identical
    # files one version of it; nobody alike to the stub, and nobody left out
    clusters = seen.rows["cluster"]
    first = clusters[0]
    assert first.startswith("ex01") and "copier" in first, clusters
    versions = seen.rows["version"]
    assert f"A {HOSTILE} = buggy (the very same file)" in " ".join(versions), versions
    assert any(v.startswith("B copier · closest to version A") for v in versions), versions
    assert not any("stub" in c or "empty" in c for c in clusters)
    assert re.search(rf"\d+ students alike, in {len(clusters)} cluster", seen.text)


def test_report_from_a_merged_folder(graded, tmp_path):
    folder, out = graded
    merged = tmp_path / "merged"
    run = grade("merge", str(out), "--out", str(merged))
    assert run.returncode == 0, (run.stdout + run.stderr)
    bare = grade("--lang", "en", "report", str(merged))
    assert bare.returncode == 0, (bare.stdout + bare.stderr)
    text = Page((merged / "report.html").read_text(encoding="utf-8")).text
    assert "Similarity not computed" in text and "off_by_one_drop_last" in text

    full = grade("--lang", "zh", "report", str(merged), "--submissions", str(folder))
    assert full.returncode == 0, (full.stdout + full.stderr)
    seen = Page((merged / "report.html").read_text(encoding="utf-8"))
    assert "班级评分报告" in seen.text and "全部学生" in seen.text
    assert any("buggy" in c and "copier" in c for c in seen.rows["cluster"])
    assert any(r.startswith("sam.zip ") and "不是文件夹" in r for r in seen.rows["refused"])
    assert any(s.startswith("5.2、5.7 练习 1 — 3") for s in seen.rows["section"])  # the sections in Chinese
    titles = {e.id: e.title("zh") for e in load_course(KIT / "course.toml").exercises}
    assert all(titles[e] in seen.text for e in ("ex01", "ex05"))  # the titles too (the gradebook's are English)
    assert len(seen.rows["roster"]) == 6 and not any(attrs.get("class") == "own-report" for _, attrs in seen.tags)
    # the students' files were read from a temporary staging folder: OUT gained only the page
    shown = sorted(p.name for p in merged.iterdir() if not p.name.startswith("."))  # (.grade-batch.lock)
    assert shown == ["cohort.json", "grades.csv", "report.html", "results.json"]  # (the shards' cohort, named)


def test_report_of_a_folder_without_a_gradebook(tmp_path):
    run = grade("report", str(tmp_path))
    assert run.returncode == 2 and "results.json" in run.stderr, (run.stdout + run.stderr)


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
    """`\u202eecila` (a right-to-left override in a folder's name) in one version with `bob`:
    laid out by Chromium, bob stays right of the `=` (once the override carried on past the
    name, and the pair read "bob ↔ alice")."""
    from grader.cohort.report_html import cohort_summary, render_report
    from grader.cohort.similarity import SimilarCluster

    page = render_report(cohort_summary({"students": {}, "exercises": []}, None, "en"),
                         [SimilarCluster("ex01", (("\u202eecila", "bob"),), (None,), 1.0, 100)], "en")
    probe = """<script>
      const names = [...document.querySelectorAll("li.version .student")];
      const item = names[0].parentElement, mark = document.createRange();
      const text = [...item.childNodes].find(n => n.nodeType === 3 && n.textContent.includes("="));
      mark.selectNodeContents(text);
      const at = mark.getBoundingClientRect().left, bob = names[1].getBoundingClientRect().left;
      document.body.setAttribute("data-bob-right-of-mark", String(bob > at));
    </script>"""
    (tmp_path / "report.html").write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    dom = browse(tmp_path / "report.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-bob-right-of-mark="true"' in dom.stdout, dom.stdout[-1500:]


def test_clusters_hold_every_student_alike_and_identical_files_once(tmp_path):
    """A leaked solution handed in by 12 students and edited by 3 more: one cluster, the 12
    identical files one version, each edit a version of its own, every name shown (the page
    listed the first 100 pairs, identical files pair by pair, and hid the rest)."""
    from grader.cohort.report_html import cohort_summary, render_report
    from grader.cohort.similarity import similar_clusters, similar_pairs
    from grader.model.course import load_course

    course = load_course(KIT / "course.toml")
    solution = (KIT / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    files = {f"leak{i:02d}": solution for i in range(12)}
    files.update({f"edit{i}": solution.replace("windows", f"wins{i}").replace("tokens", f"toks{i}") + f"\n# {i}\n"
                  for i in range(3)})
    files["own"] = COPIED_EX01.replace("result", "out")
    files["alone"] = (KIT / "exercises" / "ex01_windows.py").read_text(encoding="utf-8")  # the stub
    for name, text in files.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex01_windows.py").write_text(text, encoding="utf-8")
    folders = {name: tmp_path / name for name in files}
    pairs = similar_pairs(course, ["ex01"], folders)
    clusters = similar_clusters(course, ["ex01"], folders)
    assert len(pairs) > 100  # what the page capped
    paired = {n for p in pairs for n in (p.a, p.b)}
    assert {n for c in clusters for n in c.students} == paired  # every student alike is in a cluster
    leak = next(c for c in clusters if "leak00" in c.students)
    assert leak.versions[0] == tuple(sorted(n for n in files if n.startswith("leak")))  # identical: one version
    assert {v for v in leak.versions[1:]} == {(f"edit{i}",) for i in range(3)}
    assert all(near is not None for near in leak.closest)
    page = render_report(cohort_summary({"students": {}, "exercises": []}, None, "en"), clusters, "en")
    seen = Page(page)
    assert all(name in seen.text for name in paired) and "alone" not in seen.text
    assert " = ".join(leak.versions[0]) in " ".join(seen.rows["version"])


def test_the_roster_links_each_students_own_report_and_shows_review_flags(tmp_path):
    """Links into OUT are the files' names quoted (a key's "%" is a character of the name), to
    the text report when there is one; a flagged submission shows its reasons; the entries of
    the cohort folder that are no student's are listed as refused."""
    from grader.cohort.names import student_key
    from grader.cohort.report_html import write_report

    out, cohort = tmp_path / "out", tmp_path / "cohort"
    (out / "reports").mkdir(parents=True)
    (out / "students").mkdir()
    for name in ("alice smith", "bob", "carol"):
        (cohort / name).mkdir(parents=True)
    (cohort / "sam.zip").write_bytes(b"PK")
    (out / "reports" / f"{student_key('alice smith')}.txt").write_text("alice's report\n", encoding="utf-8")
    (out / "reports" / f"{student_key('alice smith')}.json").write_text("{}\n", encoding="utf-8")
    (out / "students" / f"{student_key('bob')}.json").write_text("{}\n", encoding="utf-8")
    ex = {"id": "ex01", "title": "t", "max_score": 10}
    book = {"exercises": [ex], "students": {
        "alice smith": {"score": 10, "exercises": [{"id": "ex01", "score": 10, "status": "passed"}], "note": ""},
        "bob": {"score": 3, "exercises": [{"id": "ex01", "score": 3, "status": "failed"}], "note": "",
                "review": {"flagged": True, "reasons": ["ex01_windows.py:3: calls exec"]}},
        "carol": {"score": 0, "exercises": [{"id": "ex01", "score": 0, "status": "missing"}], "note": "no file"}}}
    page = write_report(out, book, None, None, "en", cohort=cohort)
    seen = Page(page.read_text(encoding="utf-8"))
    links = {attrs["href"] for tag, attrs in seen.tags if tag == "a" and attrs.get("class") == "own-report"}
    assert {urllib.parse.unquote(h) for h in links} == {f"reports/{student_key('alice smith')}.txt",
                                                        f"students/{student_key('bob')}.json"}
    assert all((out / urllib.parse.unquote(h)).is_file() for h in links) and all("%25" in h or "~" in h for h in links)
    rows = dict(zip(sorted(book["students"]), seen.rows["roster"]))
    assert "⚑ 1 ex01_windows.py:3: calls exec" in rows["bob"] and "⚑" not in rows["alice smith"]
    assert rows["carol"].startswith("carol 0/10 0 no file")
    assert any(r.startswith("sam.zip not a folder") for r in seen.rows["refused"])


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
