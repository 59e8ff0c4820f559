"""Submissions that share suspiciously much code, exercise by exercise (copydetect): in pairs,
and in clusters of students alike directly or through one another.

copydetect (winnowed k-gram fingerprints of the token stream, with names normalised: a renamed
variable or a rewritten comment does not hide a copy) compares every two students' files of
the same exercise. The stub's own fingerprints are boilerplate: the docstrings and signatures
every student starts from are not counted, so two students who both hand in the stub share
nothing, and a file's share is measured over the code its author added.

Worked example: students a and b hand in ex01 files that are the same function with other
names; c hands in the stub. `similar_pairs(course, ["ex01"], {"a": A, "b": B, "c": C})` gives
`[SimilarPair(exercise="ex01", a="a", b="b", share_a=1.0, share_b=1.0, tokens=210)]`.

Student files are read here by the instructor's process (as root in a batch), never
followed through a symbolic link (a link to solutions/ would make every student "similar"
to the reference, a link to /etc/shadow would be read as root), and only up to MAX_BYTES.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from grader.cohort.capped import read_capped
from grader.model.course import Course

# copydetect's own defaults: k-grams of 25 filtered characters, a match of 30 always found
NOISE_T = 25
GUARANTEE_T = 30
# A pair is shown when either file has at least this share of its own code in the other and
# the shared code is long enough to mean something (short exercises converge on one line).
THRESHOLD = 0.5
MIN_TOKENS = 60
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class SimilarPair:
    exercise: str
    a: str
    b: str
    share_a: float  # the fraction of a's own code (not the stub's) that is also in b's file
    share_b: float
    tokens: int  # the matched length, in copydetect's filtered characters

    @property
    def similarity(self) -> float:
        return max(self.share_a, self.share_b)


@dataclass(frozen=True)
class Likeness:
    """The closest other version of a file in its cluster: `share` of this version's own code
    is in `other`'s file (`other_share` the reverse), over `tokens` matched characters."""

    other: int  # the index of the other version in the cluster's `versions`
    share: float
    other_share: float
    tokens: int


@dataclass(frozen=True)
class SimilarCluster:
    """Students of one exercise whose files are alike, directly or through one another.

    `versions` are the distinct files, each with the students who handed in the very same one
    (a leaked solution handed in by 40 students is one version of 40 names); `closest[i]` is
    version i's strongest likeness to another version (None for a cluster of one version).
    """

    exercise: str
    versions: tuple[tuple[str, ...], ...]
    closest: tuple[Likeness | None, ...]
    similarity: float  # the highest share of any link in the cluster
    tokens: int

    @property
    def students(self) -> tuple[str, ...]:
        return tuple(name for version in self.versions for name in version)


def read_submission(path: Path) -> str | None:
    """The text of a student's file: a regular file, not through a link, at most MAX_BYTES."""
    data = read_capped(str(path), MAX_BYTES)
    return None if data is None else data.decode("utf-8", errors="replace")


def similar_pairs(course: Course, ids: list[str], folders: Mapping[str, Path], *,
                  threshold: float = THRESHOLD, min_tokens: int = MIN_TOKENS) -> list[SimilarPair]:
    """Every pair of students whose files of one exercise are alike, most alike first.

    `folders` maps a student's name to the folder holding their `exNN_*.py` files.
    """
    pairs: list[SimilarPair] = []
    for ex_id, groups, links in _alike(course, ids, folders, threshold, min_tokens):
        for (i, j), (share_one, share_other, tokens) in links.items():
            for a in groups[i]:
                for b in groups[j]:
                    if i == j and a >= b:  # within one group: each pair once
                        continue
                    first, second = (a, b) if a < b else (b, a)
                    shares = (share_one, share_other) if first == a else (share_other, share_one)
                    pairs.append(SimilarPair(ex_id, first, second, *shares, tokens))
    pairs.sort(key=lambda p: (-p.similarity, -p.tokens, p.exercise, p.a, p.b))
    return pairs


def similar_clusters(course: Course, ids: list[str], folders: Mapping[str, Path], *,
                     threshold: float = THRESHOLD, min_tokens: int = MIN_TOKENS) -> list[SimilarCluster]:
    """The students alike, exercise by exercise, in clusters: two students are in one cluster
    when their files are alike (as `similar_pairs` finds them), or both alike to a third's.
    Every cluster, the most alike first; identical files are one version of the cluster.

    Worked example: a and b hand in the very same ex01, c the same with renamed variables, d
    the stub: one cluster, versions `(("a", "b"), ("c",))`, each closest to the other.
    """
    clusters: list[SimilarCluster] = []
    for ex_id, groups, links in _alike(course, ids, folders, threshold, min_tokens):
        parent = list(range(len(groups)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i, j in links:
            parent[root(i)] = root(j)
        members: dict[int, list[int]] = {}
        for i in sorted({k for link in links for k in link}):
            members.setdefault(root(i), []).append(i)
        for texts in members.values():
            texts.sort(key=lambda i: (-len(groups[i]), groups[i]))  # the most handed-in version first
            closest = []
            for i in texts:
                best = None
                for (one, other), (share_one, share_other, tokens) in links.items():
                    if one == other or i not in (one, other):
                        continue
                    mine, theirs, far = (share_one, share_other, other) if one == i else (share_other, share_one, one)
                    if best is None or (max(mine, theirs), tokens) > (max(best.share, best.other_share), best.tokens):
                        best = Likeness(texts.index(far), mine, theirs, tokens)
                closest.append(best)
            found = [links[k] for k in links if k[0] in texts]
            clusters.append(SimilarCluster(ex_id, tuple(groups[i] for i in texts), tuple(closest),
                                           max(max(a, b) for a, b, _ in found), max(t for _, _, t in found)))
    clusters.sort(key=lambda c: (-c.similarity, -len(c.students), c.exercise, c.students))
    return clusters


def _alike(course: Course, ids: list[str], folders: Mapping[str, Path], threshold: float, min_tokens: int):
    """Per exercise: (id, groups, links). `groups` are the distinct files' students (sorted
    names, one tuple per text), `links` maps (i, j), i <= j, to (share of i's code in j's, the
    reverse, matched length) for the groups alike enough; (i, i) when a group's students
    share a file long enough to count."""
    CodeFingerprint, compare_files = _copydetect()

    win_size = GUARANTEE_T - NOISE_T + 1
    for ex_id in ids:
        ex = course.exercise(ex_id)
        stub = read_submission(course.exercises_dir / ex.file) or ""

        def fingerprint(text: str, boilerplate=None):
            # fp= keeps copydetect from opening the file itself; language= names pygments' Python
            # lexer (found from the file name, pygments would compile every lexer's name patterns
            # first, in every batch and report)
            return CodeFingerprint(ex.file, NOISE_T, win_size, boilerplate=boilerplate, fp=io.StringIO(text),
                                   language="python")

        boilerplate = sorted(fingerprint(stub).hashes) if stub.strip() else []
        # students with the very same file are compared once (a leaked solution handed in by
        # 90 students is one text, not 4,005 comparisons)
        by_text: dict[str, list[str]] = {}
        for name in sorted(folders):
            text = read_submission(Path(folders[name]) / ex.file)
            if text is not None and text != stub:
                by_text.setdefault(text, []).append(name)
        prints = {text: fingerprint(text, boilerplate) for text in by_text}
        texts = [text for text in by_text if prints[text].hashes]
        links: dict[tuple[int, int], tuple[float, float, int]] = {}
        for i, one in enumerate(texts):
            for j in range(i, len(texts)):
                if i == j and len(by_text[one]) < 2:
                    continue  # a file alone is like itself, and that says nothing
                found = _compare(prints[one], prints[texts[j]], threshold, compare_files)
                if found is None:
                    continue
                share_one, share_other, tokens = found
                if tokens < min_tokens or max(share_one, share_other) < threshold:
                    continue
                links[(i, j)] = found
        yield ex_id, [tuple(by_text[text]) for text in texts], links


def _copydetect():
    """copydetect's fingerprint and comparison, imported without matplotlib's pyplot.

    copydetect's module imports pyplot at its top for its own HTML report, which is never
    drawn here (grader.cohort.report_html is ours), and importing pyplot is slow for every
    `grade batch` and `grade report`. So while copydetect is imported, an empty module stands
    in for pyplot (and for matplotlib, if it is not loaded yet), and is taken out again at
    once: a later `import matplotlib.pyplot` (the loss curve's PNG) gets the real one.
    """
    import sys
    import types

    stand_ins = {}
    if "matplotlib.pyplot" not in sys.modules and "copydetect" not in sys.modules:
        names = ["matplotlib.pyplot"] + ([] if "matplotlib" in sys.modules else ["matplotlib"])
        stand_ins = {name: types.ModuleType(name, "stands in while copydetect is imported") for name in names}
        sys.modules.update(stand_ins)
    try:
        from copydetect import CodeFingerprint, compare_files
        from copydetect import utils
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    # copydetect hashes each k-gram with Python's hash(), salted afresh in every process: the
    # same cohort's overlaps then moved by a few characters from one report to the next, and a
    # merged report never matched a single run's. Its module's own `hash` (looked up before
    # the builtin) is a keyed digest instead: the same fingerprints everywhere.
    utils.hash = stable_hash
    return CodeFingerprint, compare_files


def stable_hash(text: str) -> int:
    """A 64-bit hash of `text` that is the same in every process (blake2b).

    >>> stable_hash("def f(x):") == stable_hash("def f(x):"), stable_hash("a") != stable_hash("b")
    (True, True)
    """
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def _compare(one, other, threshold: float, compare_files) -> tuple[float, float, int] | None:
    """(share of one's code in other, the reverse, matched length), or None when plainly apart."""
    if one is other:
        return 1.0, 1.0, int(one.token_coverage)
    common = len(one.hashes & other.hashes)
    # a cheap filter first (a set intersection, ~3 µs, against ~200 µs for the full comparison):
    # a pair sharing under threshold/2 of the smaller file's fingerprints is not compared in full
    if not common or common < threshold * min(len(one.hashes), len(other.hashes)) / 2:
        return None
    tokens, (share_one, share_other), _ = compare_files(one, other)
    return round(float(share_one), 3), round(float(share_other), 3), int(tokens)
